#include "operators/template/diagnosis.h"

#include <fmt/format.h>

#include "core/status.h"

namespace kernelevolve::operators {
namespace {

/// The first line of `text`, at most `limit` characters.
std::string OneLine(const std::string& text, size_t limit) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > limit) line = line.substr(0, limit - 3) + "...";
  return line;
}

std::string FailedOutcome(const core::Evaluation& ev) {
  std::string what(core::StatusName(ev.status));
  if (ev.status == core::Status::kOk) what = "incorrect";
  if (!ev.message.empty() && ev.message != "ok") what += ": " + OneLine(ev.message, 80);
  return "parent failed (" + what + ")";
}

std::string CorrectOutcome(const core::Evaluation& ev) {
  if (ev.speedup_vs_eager.value > 0) return fmt::format("parent correct at {:.2f}x", ev.speedup_vs_eager.value);
  return "parent correct (speedup not measured)";
}

Diagnosis Make(Bottleneck bottleneck, std::string text, std::vector<KnobPreference> moves, bool safe) {
  Diagnosis d;
  d.bottleneck = bottleneck;
  d.text = std::move(text);
  d.preferred_moves = std::move(moves);
  d.prefer_safe = safe;
  return d;
}

}  // namespace

std::string BottleneckName(Bottleneck bottleneck) {
  switch (bottleneck) {
    case Bottleneck::kBuildFailed: return "build_failed";
    case Bottleneck::kRunFailed: return "run_failed";
    case Bottleneck::kIncorrect: return "incorrect";
    case Bottleneck::kUnmeasured: return "unmeasured";
    case Bottleneck::kMemoryBound: return "memory_bound";
    case Bottleneck::kNearRoofline: return "near_roofline";
    case Bottleneck::kComputeBound: return "compute_bound";
  }
  return "unmeasured";
}

Diagnosis Diagnose(const core::Evaluation& ev) {
  using nlohmann::json;
  if (ev.status == core::Status::kCompileError) {
    return Make(Bottleneck::kBuildFailed,
                FailedOutcome(ev) + ": back to the settings that built: scalar math, no unroll",
                {{"simd", "off"}, {"math", "libm"}, {"unroll", 1}}, true);
  }
  const bool incorrect = ev.status == core::Status::kIncorrect || (ev.status == core::Status::kOk && !ev.correct);
  if (ev.status != core::Status::kOk && !incorrect) {
    return Make(Bottleneck::kRunFailed,
                FailedOutcome(ev) + ": back to safe settings: one thread, scalar math, no unroll",
                {{"threads", "1"}, {"simd", "off"}, {"math", "libm"}, {"unroll", 1}}, true);
  }
  if (incorrect) {
    return Make(Bottleneck::kIncorrect, FailedOutcome(ev) + ": back to safe accumulation / scalar math",
                {{"simd", "off"}, {"math", "libm"}, {"algorithm", "three_pass"}, {"threads", "1"}, {"unroll", 1}},
                true);
  }
  const core::RooflineFigures& r = ev.roofline;
  const std::string outcome = CorrectOutcome(ev);
  if (r.bound == "memory" && r.fraction > 0 && r.fraction < kNearRooflineFraction) {
    return Make(Bottleneck::kMemoryBound,
                fmt::format("{}, memory-bound at {:.0f}% of copy bandwidth: vectorize / parallelize / fuse passes",
                            outcome, 100 * r.fraction),
                {{"threads", "all"},
                 {"simd", "on"},
                 {"math", "vectorized"},
                 {"algorithm", "online"},
                 {"algorithm", "two_pass_store"},
                 {"unroll", 4}},
                false);
  }
  if (r.bound == "memory" && r.fraction > kCacheResidentFraction) {
    return Make(Bottleneck::kMemoryBound,
                fmt::format("{}, at {:.0f}% of copy bandwidth (working set in cache, the DRAM roof does not bind): "
                            "vectorize / parallelize, then block tuning",
                            outcome, 100 * r.fraction),
                {{"threads", "all"},
                 {"simd", "on"},
                 {"math", "vectorized"},
                 {"block", json()},
                 {"block_rows", json()},
                 {"block_i", json()}},
                false);
  }
  if (r.bound == "memory" && r.fraction >= kNearRooflineFraction) {
    return Make(Bottleneck::kNearRoofline,
                fmt::format("{}, within 10% of copy bandwidth ({:.0f}%): only thread/block tuning left", outcome,
                            100 * r.fraction),
                {{"block", json()}, {"block_rows", json()}, {"block_i", json()}, {"unroll", json()}}, false);
  }
  if (r.bound == "compute") {
    const std::string where =
        r.fraction > 0 ? fmt::format("compute-bound at {:.0f}% of FMA peak", 100 * r.fraction) : "compute-bound";
    return Make(Bottleneck::kComputeBound, outcome + ", " + where + ": vectorize the math, unroll, use every thread",
                {{"math", "vectorized"}, {"simd", "on"}, {"unroll", 4}, {"unroll", 2}, {"threads", "all"}},
                false);
  }
  return Make(Bottleneck::kUnmeasured, outcome, {}, false);
}

}  // namespace kernelevolve::operators

#include "operators/template/profile_diagnosis.h"

#include <fmt/format.h>

#include <optional>
#include <utility>
#include <vector>

namespace kernelevolve::operators {
namespace {

using nlohmann::json;

bool Below(const std::optional<double>& v, double limit) { return v && *v < limit; }
bool AtLeast(const std::optional<double>& v, double limit) { return v && *v >= limit; }

/// A rule's verdict: advice text, its moves, and the bottleneck it names (nullopt:
/// keep the evaluation's).
struct Advice {
  std::string text;
  std::vector<KnobPreference> moves;
  std::optional<Bottleneck> bottleneck;
};

std::optional<Advice> Rule(const core::KernelMetrics& t) {
  if (AtLeast(t.registers_per_thread, kHighRegistersPerThread)) {
    return Advice{
        fmt::format("{:.0f} registers per thread cap occupancy: more warps per block, fewer stages",
                    *t.registers_per_thread),
        {{"num_warps", 8}, {"num_warps", 16}, {"num_stages", 1}, {"block", json()}},
        std::nullopt};
  }
  if (AtLeast(t.dram_throughput_pct, kDramRoofPct)) {
    return Advice{
        fmt::format("DRAM at {:.0f}% of peak: at the memory roof, only fewer bytes (fusion) help",
                    *t.dram_throughput_pct),
        {{"block", json()}, {"num_warps", json()}},
        Bottleneck::kNearRoofline};
  }
  if (Below(t.dram_throughput_pct, kLowDramPct) &&
      Below(t.achieved_occupancy_pct, kLowOccupancyPct)) {
    return Advice{"low DRAM throughput and low occupancy: more warps / rows per program",
                  {{"num_warps", 8}, {"num_warps", 16}, {"persistent", "yes"}, {"block", json()}},
                  Bottleneck::kMemoryBound};
  }
  if (AtLeast(t.sm_throughput_pct, kHighSmPct) && Below(t.dram_throughput_pct, kLowDramPct)) {
    return Advice{"SM pipes busy, DRAM not: fewer instructions per element",
                  {{"algorithm", json()}, {"num_warps", json()}},
                  Bottleneck::kComputeBound};
  }
  if (!t.top_stalls.empty() && t.top_stalls.front().reason == "long_scoreboard" &&
      Below(t.dram_throughput_pct, kLowDramPct)) {
    return Advice{"warps wait on global loads (long_scoreboard): more loads in flight",
                  {{"num_stages", 3}, {"num_stages", 2}, {"block", json()}, {"persistent", "yes"}},
                  std::nullopt};
  }
  if (!t.top_stalls.empty() && Below(t.dram_throughput_pct, kLowDramPct) &&
      (t.top_stalls.front().reason == "mio_throttle" ||
       t.top_stalls.front().reason == "lg_throttle")) {
    return Advice{fmt::format("warps wait on the load/store pipes ({}): fewer memory "
                              "instructions per element (wider loads; broadcast operands "
                              "loaded once per block, not gathered per element; fewer "
                              "pipelined stages)",
                              t.top_stalls.front().reason),
                  {{"num_stages", 1}, {"block", json()}, {"num_warps", json()}},
                  Bottleneck::kMemoryBound};
  }
  return std::nullopt;
}

/// The kernel of a multi-kernel call that takes at least kDominantKernelShare of its
/// time, or nullptr.
const core::KernelMetrics* DominantKernel(const core::KernelProfile& p) {
  if (p.kernels.size() < 2 || !p.total.duration_us || *p.total.duration_us <= 0) return nullptr;
  for (const auto& k : p.kernels) {
    if (k.duration_us && *k.duration_us >= kDominantKernelShare * *p.total.duration_us) return &k;
  }
  return nullptr;
}

}  // namespace

std::string ProfileLine(const core::KernelProfile& p) {
  if (!p.Ok()) return fmt::format("{}: {}", p.tool, p.note.empty() ? p.status : p.note);
  const core::KernelMetrics& t = p.total;
  std::vector<std::string> parts;
  if (t.duration_us) {
    parts.push_back(fmt::format("{:.1f} us in {} kernel{}", *t.duration_us, p.kernels.size(),
                                p.kernels.size() == 1 ? "" : "s"));
  }
  if (t.dram_throughput_pct)
    parts.push_back(fmt::format("DRAM {:.0f}% of peak", *t.dram_throughput_pct));
  if (t.sm_throughput_pct) parts.push_back(fmt::format("SM {:.0f}%", *t.sm_throughput_pct));
  if (t.achieved_occupancy_pct)
    parts.push_back(fmt::format("occupancy {:.0f}%", *t.achieved_occupancy_pct));
  if (t.registers_per_thread)
    parts.push_back(fmt::format("{:.0f} registers/thread", *t.registers_per_thread));
  std::string line = p.tool + ":";
  for (size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? " " : ", ") + parts[i];
  if (!t.top_stalls.empty()) {
    line += parts.empty() ? " stalls:" : ", stalls:";
    for (size_t i = 0; i < t.top_stalls.size(); ++i) {
      line += fmt::format("{} {} {:.0f}%", i == 0 ? "" : ",", t.top_stalls[i].reason,
                          100 * t.top_stalls[i].share);
    }
  }
  return line;
}

Diagnosis DiagnoseWithProfile(const core::Evaluation& evaluation,
                              const core::KernelProfile& profile) {
  Diagnosis d = Diagnose(evaluation);
  if (!evaluation.correct || evaluation.status != core::Status::kOk || !profile.Ok()) return d;
  d.text += "; " + ProfileLine(profile);
  // One kernel holding most of the time decides: its own figures, not the call's
  // duration-weighted mix with the fast ones.
  const core::KernelMetrics* dominant = DominantKernel(profile);
  if (dominant != nullptr) {
    d.text += fmt::format("; kernel {} takes {:.0f}% of the time", dominant->name,
                          100 * *dominant->duration_us / *profile.total.duration_us);
    if (dominant->dram_throughput_pct)
      d.text += fmt::format(" at DRAM {:.0f}% of peak", *dominant->dram_throughput_pct);
    if (!dominant->top_stalls.empty())
      d.text += fmt::format(" (stalls: {} first)", dominant->top_stalls.front().reason);
  }
  const std::optional<Advice> advice = Rule(dominant != nullptr ? *dominant : profile.total);
  if (!advice) return d;
  d.text += ": " + advice->text;
  if (advice->bottleneck) d.bottleneck = *advice->bottleneck;
  std::vector<KnobPreference> moves = advice->moves;
  moves.insert(moves.end(), d.preferred_moves.begin(), d.preferred_moves.end());
  d.preferred_moves = std::move(moves);
  return d;
}

}  // namespace kernelevolve::operators

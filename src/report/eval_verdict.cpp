#include "report/eval_verdict.h"

#include <sstream>

#include <fmt/format.h>

#include "core/status.h"
#include "eval/roofline.h"

namespace kernelevolve::report {
namespace {

/// At most `max_lines` lines of `text`, each indented by two spaces.
std::string Indented(const std::string& text, int max_lines) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  int n = 0;
  while (std::getline(in, line)) {
    if (n++ == max_lines) {
      out += "  ...\n";
      break;
    }
    out += "  " + line + "\n";
  }
  return out;
}

/// The fastest call first: the speedup line below is the ratio of fastest calls.
std::string Stats(const core::TimingStats& t) {
  return fmt::format("fastest {:.1f} us, median {:.1f} us [{:.1f}, {:.1f}] (n={})", t.min_us, t.median_us, t.ci_low_us,
                     t.ci_high_us, t.n);
}

}  // namespace

EvalVerdict DecideEvalVerdict(const RunSummary& s, const std::filesystem::path& kernel_path) {
  EvalVerdict v;
  v.kernel_path = kernel_path;
  if (s.nodes.empty()) {
    v.verdict = "not_evaluated";
    v.message = s.error.empty() ? "the kernel was not evaluated" : s.error;
    return v;
  }
  const core::Evaluation& e = s.nodes.front().evaluation;
  if (e.status != core::Status::kOk || !e.correct) {
    v.verdict = std::string(core::StatusName(e.status == core::Status::kOk ? core::Status::kIncorrect : e.status));
    v.message = e.message;
    return v;
  }
  const exec::Confirmation& c = s.confirmation;
  if (!c.done && !c.message.empty()) {
    v.verdict = "failed_confirmation";
    v.message = c.message;
    return v;
  }
  v.verdict = "correct";
  v.message = "ok";
  return v;
}

nlohmann::json EvalResultJson(const RunSummary& s, const EvalVerdict& v) {
  const search::Node* node = s.nodes.empty() ? nullptr : &s.nodes.front();
  return {{"kernel_path", v.kernel_path.string()},
          {"verdict", v.verdict},
          {"message", v.message},
          {"node_id", node ? node->id : -1},
          {"operator", node ? node->candidate.operator_name : ""},
          {"log_excerpt", node && !v.Correct() ? node->evaluation.log_excerpt : ""}};
}

std::string EvalVerdictText(const RunSummary& s, const EvalVerdict& v) {
  const std::string where = s.target == "cpu"  ? fmt::format("cpu, {} threads", s.machine.threads)
                            : s.gpu_interpret ? fmt::format("{} {}", s.target, kInterpretWording)
                                              : fmt::format("{} on the GPU", s.target);
  std::string out = fmt::format("\neval of {} on {} ({})\n", v.kernel_path.string(), s.problem, where);
  if (s.nodes.empty()) return out + fmt::format("{}: {}\n", v.verdict, v.message);
  const core::Evaluation& e = s.nodes.front().evaluation;
  if (e.latency.Measured()) {
    const core::TimingStats& eager = s.speedup_baseline.Measured() ? s.speedup_baseline
                                     : e.paired_baseline.Measured() ? e.paired_baseline
                                                                    : s.eager_baseline;
    out += fmt::format("eager PyTorch: {}\n", Stats(eager));
    out += fmt::format("kernel:        {}", Stats(e.latency));
    if (e.kernel_only.Measured()) out += fmt::format(", kernel-only median {:.1f} us", e.kernel_only.median_us);
    out += "\n";
    out += fmt::format("speedup vs eager: {:.2f}x [{:.2f}, {:.2f}] (fastest calls, as the search scores)\n",
                       e.speedup_vs_eager.value, e.speedup_vs_eager.ci_low, e.speedup_vs_eager.ci_high);
  }
  const exec::Confirmation& c = s.confirmation;
  out += ConfirmedLine(c);
  out += DisagreementWarning(e.speedup_vs_eager, c);
  out += LargeSpeedupWarning(c.done ? c.speedup.value : e.speedup_vs_eager.value);
  if (e.roofline.Known()) out += fmt::format("roofline: {}\n", eval::RooflineShort(e.roofline));
  if (!v.Correct()) {
    out += fmt::format("{}: {}\n", v.verdict, v.message);
    if (!e.log_excerpt.empty()) out += Indented(e.log_excerpt, 20);
    return out;
  }
  const double speedup = c.done ? c.speedup.value : e.speedup_vs_eager.value;
  out += fmt::format("correct: {:.2f}x eager ({})\n", speedup,
                     c.done ? ConfirmedVerdict(c)
                            : "unconfirmed: --confirm-rounds 0");
  return out;
}

}  // namespace kernelevolve::report

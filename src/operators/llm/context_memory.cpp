#include "operators/llm/context_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "core/status.h"
#include "operators/template/profile_diagnosis.h"

namespace kernelevolve::operators::llm {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string FailureFacet(core::Status status) {
  switch (status) {
    case core::Status::kCompileError: return "compile_error";
    case core::Status::kIncorrect:
    case core::Status::kRejectedByCheck: return "incorrect";
    case core::Status::kTimeout: return "timeout";
    case core::Status::kCrash:
    case core::Status::kOutOfMemory:
    case core::Status::kRuntimeError:
    case core::Status::kWorkerLost: return "crash";
    case core::Status::kOk: return "";
  }
  return "";
}

bool ComputeHeavy(const core::Problem& problem) {
  for (const core::OpNode* call : problem.graph.Calls()) {
    for (const char* op : {"mm", "matmul", "conv", "linear", "addmm", "bmm", "einsum"}) {
      if (call->target.find(op) != std::string::npos) return true;
    }
  }
  return false;
}

std::string FailedChecks(const core::Evaluation& e) {
  std::string out;
  int shown = 0;
  for (const core::OutputCheck& c : e.checks) {
    if (c.passed || shown >= 4) continue;
    out += fmt::format("- seed {} {}: {} elements off (max abs error {:.3g}, first at flat index {}){}\n",
                       c.seed_index, c.output, c.mismatches, c.max_abs_error, c.first_mismatch,
                       c.note.empty() ? "" : "; " + c.note);
    ++shown;
  }
  return out;
}

}  // namespace

std::string ErrorExcerpt(const std::string& log, size_t max_chars) {
  if (log.empty()) return "";
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  int kept = 0;
  for (const std::string& line : lines) {
    if (kept < 12 && Lower(line).find("error") != std::string::npos) {
      out += line + "\n";
      ++kept;
    }
  }
  if (out.empty()) {
    for (size_t i = lines.size() > 15 ? lines.size() - 15 : 0; i < lines.size(); ++i) out += lines[i] + "\n";
  }
  if (out.size() > max_chars) out = out.substr(0, max_chars) + "...\n";
  return out;
}

Diagnosis Diagnose(const search::Node& node, const core::Problem& problem) {
  const core::Evaluation& e = node.evaluation;
  Diagnosis d;
  if (e.status != core::Status::kOk || !e.correct) {
    d.phase = "repair";
    d.bottleneck = FailureFacet(e.status == core::Status::kOk ? core::Status::kIncorrect : e.status);
    d.headline = fmt::format("{}: {}", core::StatusName(e.status), e.message);
    std::string excerpt = ErrorExcerpt(e.log_excerpt);
    if (!excerpt.empty()) d.details += "Log excerpt:\n```\n" + excerpt + "```\n";
    d.details += FailedChecks(e);
    return d;
  }
  d.phase = "optimize";
  int64_t bytes = 0;
  for (const auto& t : problem.inputs) bytes += t.NumBytes();
  for (const auto& t : problem.outputs) bytes += t.NumBytes();
  const double median_us = e.latency.median_us;
  const double gbps = median_us > 0 ? static_cast<double>(bytes) / (median_us * 1e3) : 0;
  std::string limit;
  if (median_us > 0 && median_us < 20) {
    d.bottleneck = "latency";
    limit = "latency bound: at this size call overhead and thread start-up dominate";
  } else if (ComputeHeavy(problem)) {
    d.bottleneck = "compute_bound";
    limit = "compute bound: the graph holds matrix products or convolutions";
  } else {
    d.bottleneck = "memory_bound";
    limit = "memory bound: elementwise and reduction ops do few FLOPs per byte moved";
  }
  d.headline = fmt::format("correct, {:.2f}x eager PyTorch; {}", e.speedup_vs_eager.value, limit);
  d.details = fmt::format("Median {:.1f} us per call ({:.1f} us kernel only); {} bytes in and out, "
                          "{:.2f} GB/s effective.\n",
                          median_us, e.kernel_only.median_us, bytes, gbps);
  if (node.profile && node.profile->Ok()) {  // issue 6: counters taken during the search
    d.details += "Hardware counters (Nsight Compute): " + operators::ProfileLine(*node.profile) + "\n";
    const operators::Diagnosis advice = operators::DiagnoseWithProfile(e, *node.profile);
    d.details += "Counter-based diagnosis: " + advice.text + "\n";
  }
  return d;
}

}  // namespace kernelevolve::operators::llm

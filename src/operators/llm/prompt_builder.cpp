#include "operators/llm/prompt_builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "eval/roofline.h"
#include "eval/tolerance.h"

namespace kernelevolve::operators::llm {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path, size_t max_chars) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_chars) s = s.substr(0, max_chars) + "\n# ... (truncated)\n";
  return s;
}

std::string Shape(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string Tensors(const core::Problem& p) {
  std::string out;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    out += fmt::format("- inputs[{}] `{}`: {} {}\n", i, p.inputs[i].name, core::DTypeName(p.inputs[i].dtype),
                       Shape(p.inputs[i].shape));
  }
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    out += fmt::format("- outputs[{}] `{}`: {} {}\n", i, p.outputs[i].name, core::DTypeName(p.outputs[i].dtype),
                       Shape(p.outputs[i].shape));
  }
  return out;
}

std::string Graph(const core::Problem& p) {
  std::vector<std::string> ops;
  for (const core::OpNode* call : p.graph.Calls()) ops.push_back(call->target);
  if (ops.empty()) return "";
  std::string out = "\nATen ops of the captured forward graph, in order: ";
  for (size_t i = 0; i < ops.size() && i < 40; ++i) out += (i ? ", " : "") + ops[i];
  return out + (ops.size() > 40 ? ", ...\n" : "\n");
}

/// "float32: atol 1e-4 + rtol 1e-4 x |reference|" per distinct output dtype, with the
/// problem's own overrides ("(the problem's own TOLERANCE)").
std::string ToleranceText(const core::Problem& p, const std::map<core::DType, core::Tolerance>& overrides) {
  std::set<core::DType> dtypes;
  for (const auto& t : p.outputs) dtypes.insert(t.dtype);
  if (dtypes.empty()) dtypes.insert(core::DType::kFloat32);
  std::string out;
  for (core::DType d : dtypes) {
    auto it = overrides.find(d);
    const core::Tolerance t = it != overrides.end() ? it->second : eval::DefaultTolerance(d);
    out += fmt::format("{}{}: |out - ref| <= atol {:g} + rtol {:g} x |ref|{}", out.empty() ? "" : "; ",
                       core::DTypeName(d), t.atol, t.rtol,
                       it != overrides.end() ? " (the problem's own TOLERANCE)" : "");
  }
  return out;
}

/// What the checker allows beyond the tolerance (docs/fitness.md): per element, a multiple
/// of eager's own rounding error at that element on the edge-case sets where rounding moves
/// elements by about the tolerance (on the CPU, on the seed sets too for a float16 /
/// bfloat16 output), and on GPU targets on every such set; there, which
/// float32 products the reference itself runs in TF32 (core::ReferenceTf32), so a kernel
/// may too.
std::string AllowanceText(const core::Problem& p, const TargetProtocol& protocol) {
  const bool gpu = protocol.target != "cpu";
  if (p.eager_error_multiple <= 0) {
    return gpu ? ". Float32 products must keep float32 accuracy against that exact reference (no plain TF32)" : "";
  }
  std::string out = fmt::format(
      ". On an edge-case input set (the first set's float inputs set to 0, -|x|, x * 1e4, "
      "x * 1e-30) where float rounding moves elements by about the tolerance{}, each element's tolerance "
      "adds {:g} x eager's own rounding error at that element against a float64 reference (the "
      "problem's EAGER_ERROR_MULTIPLE; 0 where eager is exact, so no slack there)",
      gpu ? ", and on every such set on the GPU (eager's error measured there, TF32 included)" : "", p.eager_error_multiple);
  const bool half_output = std::any_of(p.outputs.begin(), p.outputs.end(), [](const core::TensorSpec& t) {
    return t.dtype == core::DType::kFloat16 || t.dtype == core::DType::kBFloat16;
  });
  if (!gpu && half_output) {
    out += ". A float16 / bfloat16 output gets that allowance on the seed sets too, where rounding moves "
           "it by about its tolerance (about one unit in the last place): round as eager does, after every op";
  }
  if (!gpu) return out;
  const auto& tf32 = p.reference_tf32;
  const bool triton = protocol.target == "triton";
  const std::string tf32_way = triton ? "tl.dot(..., input_precision=\"tf32\")" : "TF32 tensor-core MMA";
  const std::string exact_way = triton ? "tl.dot input_precision=\"tf32x3\" or \"ieee\""
                                       : "float32 FMA, or 3xTF32 (hi/lo split) on tensor cores";
  // The kinds of float32 product the reference runs in TF32, with the flags that say so.
  std::vector<std::string> kinds, flags;
  if (tf32.conv) {
    kinds.push_back("convolutions");
    flags.push_back("torch.backends.cudnn.allow_tf32, PyTorch's default");
  }
  if (tf32.rnn) {
    kinds.push_back("recurrent layers (nn.LSTM / GRU / RNN run in cuDNN)");
    flags.push_back("torch.backends.cudnn.rnn.fp32_precision");
  }
  if (tf32.matmul) {
    kinds.push_back("matmuls");
    flags.push_back("torch.backends.cuda.matmul.allow_tf32");
  }
  if (!kinds.empty()) {
    const std::string last = kinds.back();
    kinds.pop_back();
    const std::string listed = kinds.empty() ? last : fmt::format("{} and {}", fmt::join(kinds, ", "), last);
    out += fmt::format(". The reference runs its float32 {} in TF32 ({}), so {} is acceptable for those; other "
                       "float32 products must keep float32 accuracy ({})",
                       listed, fmt::join(flags, "; "), tf32_way, exact_way);
  } else {
    out += fmt::format(". The reference runs no float32 product in TF32: keep float32 accuracy ({})", exact_way);
  }
  return out;
}

std::string ProblemSection(const PromptLibrary& lib, const PromptInputs& in, const TargetProtocol& protocol,
                           int threads) {
  const core::Problem& p = *in.context->problem;
  std::string overrides;
  if (!p.overrides.empty()) {
    overrides = "\nModule-level constants overridden for this run (the shapes below include them):";
    for (const auto& [k, v] : p.overrides) overrides += fmt::format(" {}={}", k, v);
    overrides += "\n";
  }
  const core::DType first = p.outputs.empty() ? core::DType::kFloat32 : p.outputs[0].dtype;
  auto own = in.tolerance_overrides.find(first);
  const core::Tolerance tol = own != in.tolerance_overrides.end() ? own->second : eval::DefaultTolerance(first);
  std::string reference = ReadText(p.source_path, 12000);
  if (reference.empty()) reference = "# (the reference file could not be read)";
  return lib.Render("sections/problem",
                    {{"name", p.name},
                     {"path", p.source_path.filename().string()},
                     {"reference", reference},
                     {"overrides", overrides},
                     {"tensors", Tensors(p)},
                     {"eager_us", p.eager_baseline.Measured() ? fmt::format("{:.1f} us", p.eager_baseline.median_us)
                                                               : std::string("(not measured)")},
                     {"threads", std::to_string(threads)},
                     {"eager_where", protocol.eager_where(threads)},
                     {"atol", fmt::format("{:g}", tol.atol)},
                     {"rtol", fmt::format("{:g}", tol.rtol)},
                     {"tolerance", ToleranceText(p, in.tolerance_overrides) + AllowanceText(p, protocol)},
                     {"graph", Graph(p)}});
}

/// The parent on the roofline (eval/roofline.h), one line; "" when unknown.
std::string RooflineLine(const core::RooflineFigures& r) {
  if (!r.Known()) return "";
  std::string line = fmt::format("Roofline: {}-bound ({:.3g} FLOP/byte); achieved {:.1f} GB/s and {:.1f} GFLOP/s",
                                 r.bound, r.arithmetic_intensity, r.achieved_gbps, r.achieved_gflops);
  if (r.fraction > 0) {
    line += fmt::format(" = {:.0f}% of the measured {}", 100 * r.fraction,
                        r.bound == "memory" ? "copy bandwidth" : "compute peak");
  }
  return line + ".\n";
}

std::string Outcome(const search::Node& n) {
  const core::Evaluation& e = n.evaluation;
  if (e.status == core::Status::kOk && e.correct) return fmt::format("ok, {:.2f}x", e.speedup_vs_eager.value);
  std::string message = e.message.size() > 120 ? e.message.substr(0, 117) + "..." : e.message;
  return fmt::format("{} ({})", core::StatusName(e.status), message);
}

std::string List(const std::vector<const search::Node*>& nodes, size_t max_items) {
  std::string out;
  const size_t start = nodes.size() > max_items ? nodes.size() - max_items : 0;
  if (start > 0) out += fmt::format("- ({} earlier entries left out)\n", start);
  for (size_t i = start; i < nodes.size(); ++i) out += "- " + SummarizeNode(*nodes[i]) + "\n";
  return out;
}

std::string ContextSections(const PromptLibrary& lib, const PromptInputs& in, const TargetProtocol& protocol) {
  const OperatorContext& c = *in.context;
  std::string out;
  if (c.parent && !c.clean_slate) {
    out += lib.Render("sections/parent", {{"id", std::to_string(c.parent->id)},
                                          {"outcome", Outcome(*c.parent)},
                                          {"diagnosis", in.diagnosis.headline},
                                          {"details", in.diagnosis.details},
                                          {"roofline", RooflineLine(c.parent->evaluation.roofline)},
                                          {"fence", protocol.fence},
                                          {"source", c.parent->candidate.source}}) + "\n";
  }
  if (c.lineage.size() > 1 && !c.clean_slate) {
    std::vector<const search::Node*> ancestors(c.lineage.begin(), c.lineage.end() - 1);
    out += lib.Render("sections/lineage", {{"items", List(ancestors, 8)}}) + "\n";
  }
  if (!c.siblings.empty() && !c.clean_slate) out += lib.Render("sections/siblings", {{"items", List(c.siblings, 10)}}) + "\n";
  if (!c.experiences.empty()) {
    std::string items;
    for (size_t i = 0; i < c.experiences.size() && i < 5; ++i) items += "- " + c.experiences[i] + "\n";
    out += lib.Render("sections/experiences", {{"items", items}}) + "\n";
  }
  if (!in.passages.empty()) {
    std::string text;
    for (const knowledge::Passage& p : in.passages) {
      text += fmt::format("## {} — {} ({})\n\n{}\n\n", p.title, p.heading, p.document, p.text);
    }
    out += lib.Render("sections/knowledge", {{"passages", text}}) + "\n";
  }
  return out;
}

std::string Task(const PromptInputs& in, const TargetProtocol& protocol) {
  const OperatorContext& c = *in.context;
  if (!c.parent || c.clean_slate) {
    std::string task = "Write a first kernel for this problem from scratch: correct above all, and reasonably fast.";
    if (c.clean_slate) task += " Earlier attempts stalled; take an approach different from the usual one.";
    if (in.draft_index > 0) {
      task += fmt::format(" This is independent draft number {}: choose a different strategy from the obvious "
                          "first one ({}).", in.draft_index + 1,
                          protocol.target == "cpu" ? "another loop structure, vectorization or threading scheme"
                                                   : "another tiling, work per program or thread block, or memory "
                                                     "access pattern");
    }
    return task;
  }
  if (in.diagnosis.phase == "repair") {
    return "The kernel below failed. Find the cause from the outcome and the log, and return a fixed kernel "
           "that keeps its performance ideas where they are sound.";
  }
  return "The kernel below is correct. Make it faster without breaking correctness: attack the bottleneck "
         "named in the diagnosis, and do not repeat ideas listed as already tried.";
}

}  // namespace

PromptLibrary PromptLibrary::Load(const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    throw core::InvalidInputError(fmt::format("--llm-prompts {}: no such folder of prompt templates", dir.string()));
  }
  PromptLibrary lib;
  lib.dir_ = dir;
  lib.version_ = fs::absolute(dir).lexically_normal().filename().string();
  if (lib.version_.empty()) lib.version_ = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  for (const fs::path& sub : {dir, dir / "sections"}) {
    if (!fs::is_directory(sub)) continue;
    for (const auto& entry : fs::directory_iterator(sub)) {
      if (entry.path().extension() != ".md" || entry.path().filename() == "README.md") continue;
      std::string name = (sub == dir ? "" : "sections/") + entry.path().stem().string();
      lib.templates_[name] = ReadText(entry.path(), 1 << 20);
    }
  }
  for (const char* required : {"system", "candidate", "deep_search", "sections/problem",
                               "sections/hardware", "sections/parent", "sections/lineage", "sections/siblings",
                               "sections/experiences", "sections/knowledge"}) {
    if (!lib.templates_.count(required)) {
      throw core::InvalidInputError(fmt::format("--llm-prompts {}: missing template {}.md", dir.string(), required));
    }
  }
  return lib;
}

std::string PromptLibrary::Render(const std::string& name, const std::map<std::string, std::string>& vars) const {
  auto it = templates_.find(name);
  if (it == templates_.end()) throw core::InternalError(fmt::format("prompt template {}.md not loaded", name));
  const std::string& t = it->second;
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t open = t.find("{{", pos);
    if (open == std::string::npos) break;
    const size_t close = t.find("}}", open + 2);
    if (close == std::string::npos) break;
    const std::string key = t.substr(open + 2, close - open - 2);
    auto v = vars.find(key);
    if (v == vars.end()) {
      throw core::InternalError(fmt::format("{}/{}.md: unknown placeholder {{{{{}}}}}", dir_.string(), name, key));
    }
    out += t.substr(pos, open - pos) + v->second;
    pos = close + 2;
  }
  return out + t.substr(pos);
}

fs::path DefaultPromptDir() { return fs::path(KE_SOURCE_DIR) / "prompts" / "v2"; }

std::string PromptLibrary::AbiTemplate(const TargetProtocol& protocol) const {
  if (Has(protocol.abi_template)) return protocol.abi_template;
  if (!protocol.legacy_abi_template.empty() && Has(protocol.legacy_abi_template)) return protocol.legacy_abi_template;
  throw core::InvalidInputError(fmt::format(
      "--llm-prompts {}: no {}.md, so no ABI for --target {} (prompts/v1 predates the GPU targets; the default "
      "prompts/v2 has one per target)", dir_.string(), protocol.abi_template, protocol.target));
}

std::string SummarizeNode(const search::Node& n) {
  std::string rationale = n.candidate.rationale;
  if (rationale.size() > 160) rationale = rationale.substr(0, 157) + "...";
  return fmt::format("node {} ({}): {} -> {}", n.id, n.candidate.operator_name, rationale, Outcome(n));
}

Prompt BuildPrompt(const PromptLibrary& lib, const PromptInputs& in) {
  if (!in.context || !in.context->problem) throw core::InternalError("BuildPrompt: no context or problem");
  const OperatorContext& c = *in.context;
  const core::Problem& p = *c.problem;
  const TargetProtocol& protocol = in.protocol ? *in.protocol : CpuProtocol();
  const int threads = std::max(c.threads, p.threads);
  Prompt prompt;
  prompt.version = lib.Version();
  prompt.system = lib.Render("system", {{"platform", protocol.platform},
                                        {"language", protocol.language},
                                        {"fence", protocol.fence}});
  std::map<std::string, std::string> vars = {
      {"abi", lib.Render(lib.AbiTemplate(protocol), {{"threads", std::to_string(threads)}})},
      {"problem", ProblemSection(lib, in, protocol, threads)},
      {"hardware", lib.Render("sections/hardware", {{"hardware", in.hardware}})},
      {"context", ContextSections(lib, in, protocol)},
      {"fence", protocol.fence},
      {"language", protocol.language}};
  if (in.deep_search) {
    vars["stall"] = in.stall;
    prompt.user = lib.Render("deep_search", vars);
  } else {
    vars["task"] = Task(in, protocol);
    const bool can_edit = c.parent && !c.clean_slate;
    const std::string block = fmt::format("the complete {} in one fenced ```{} block",
                                          protocol.target == "triton" ? "Python module" : "kernel", protocol.fence);
    vars["request"] = can_edit ? fmt::format("A one- or two-sentence rationale, then {}, or SEARCH/REPLACE edits "
                                             "of the kernel above.", block)
                               : fmt::format("A one- or two-sentence rationale, then {}.", block);
    prompt.user = lib.Render("candidate", vars);
  }
  return prompt;
}

}  // namespace kernelevolve::operators::llm

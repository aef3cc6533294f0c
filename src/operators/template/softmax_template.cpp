#include "operators/template/softmax_template.h"

#include <fmt/format.h>

#include "operators/template/math_prelude.h"

namespace kernelevolve::operators::templates {
namespace {

SoftmaxMatch Unsupported(const std::string& why) { return {std::nullopt, why}; }

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

/// Replaces every "EXP(" in `code` by `exp_fn` + "(".
std::string WithExp(std::string code, const std::string& exp_fn) {
  for (size_t at = code.find("EXP("); at != std::string::npos; at = code.find("EXP(", at)) {
    code.replace(at, 3, exp_fn);
    at += exp_fn.size();
  }
  return code;
}

constexpr const char* kRowMax =
    R"(// Largest element of a row (the shift that keeps exp from overflowing).
static inline float ke_row_max(const float* __restrict x, int64_t cols) {
  float m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < cols; ++j) m = x[j] > m ? x[j] : m;
  return m;
}
)";

// Milakov & Gimelshein, "Online normalizer calculation for softmax" (arXiv:1805.02867,
// 2018): partial (max, sum) pairs merge as (m1, d1) + (m2, d2) = (M, d1 e^(m1-M) +
// d2 e^(m2-M)), M = max(m1, m2). Applied per L1-resident block so that both inner
// loops are plain vectorizable reductions (a per-element update needs two exps and a
// loop-carried select that GCC does not vectorize).
constexpr const char* kOnlineMaxSum =
    R"(// Row max m and sum of exp(x - m) in one sweep over memory (Milakov & Gimelshein,
// "Online normalizer calculation for softmax", 2018). The row is cut into blocks of
// 1024 floats (4 KiB, stays in L1); each block's max and sum of exp(x - block max)
// are vectorized reductions, and the running (max, sum) absorbs the block's pair by
// their merge rule: sum = sum * exp(max - new_max) + block_sum * exp(block_max - new_max).
static inline void ke_online_max_sum(const float* __restrict x, int64_t cols, float* max_out,
                                     float* sum_out) {
  constexpr int64_t kBlock = 1024;
  float m = -INFINITY;
  float s = 0.0f;
  for (int64_t b = 0; b < cols; b += kBlock) {
    const float* xb = x + b;
    const int64_t len = cols - b < kBlock ? cols - b : kBlock;
    float bm = -INFINITY;
#pragma omp simd reduction(max : bm)
    for (int64_t j = 0; j < len; ++j) bm = xb[j] > bm ? xb[j] : bm;
    if (bm == -INFINITY) continue;  // an all -inf block adds nothing
    float bs = 0.0f;
#pragma omp simd reduction(+ : bs)
    for (int64_t j = 0; j < len; ++j) bs += EXP(xb[j] - bm);
    const float m_new = bm > m ? bm : m;
    s = (s == 0.0f ? 0.0f : s * EXP(m - m_new)) + bs * EXP(bm - m_new);
    m = m_new;
  }
  *max_out = m;
  *sum_out = s;
}
)";

}  // namespace

bool IsSoftmaxTarget(const std::string& target) {
  return target == "aten._softmax.default" || target == "aten._log_softmax.default" ||
         target == "aten.softmax.int" || target == "aten.log_softmax.int";
}

SoftmaxMatch MatchSoftmax(const core::OpGraph& graph) {
  const auto calls = graph.Calls();
  if (calls.size() != 1 || !IsSoftmaxTarget(calls[0]->target)) {
    return Unsupported("unsupported_graph: the softmax template needs exactly one softmax call");
  }
  const core::OpNode& call = *calls[0];
  const std::string& t = call.target;
  if (graph.outputs.size() != 1 || graph.outputs[0] != call.name) {
    return Unsupported("unsupported_graph: the graph's single output must be the softmax '" +
                       call.name + "'");
  }
  const core::OpArg* self = call.Arg("self");
  const core::OpNode* input = (self && self->IsRef()) ? graph.Find(self->ref) : nullptr;
  if (input == nullptr || input->kind == core::OpNodeKind::kCall) {
    return Unsupported("unsupported_op: " + t + " (its 'self' is not a graph input)");
  }
  int inputs = 0;
  for (const auto& n : graph.nodes) inputs += n.kind != core::OpNodeKind::kCall ? 1 : 0;
  if (inputs != 1 || input->abi_index != 0) {
    return Unsupported(
        fmt::format("unsupported_graph: {} tensor inputs (the softmax template "
                    "takes exactly one, at ABI index 0)",
                    inputs));
  }
  if (input->dtype != core::DType::kFloat32 || call.dtype != core::DType::kFloat32) {
    return Unsupported(
        fmt::format("unsupported_dtype: {} on {} -> {} (the softmax template "
                    "handles float32)",
                    t, core::DTypeName(input->dtype), core::DTypeName(call.dtype)));
  }
  const core::OpArg* half = call.Arg("half_to_float");
  if (half && !half->IsRef() && half->value.is_boolean() && half->value.get<bool>()) {
    return Unsupported("unsupported_op: " + t + " (half_to_float=true)");
  }
  const core::OpArg* dtype = call.Arg("dtype");
  if (dtype && (dtype->IsRef() || !dtype->value.is_null())) {
    return Unsupported("unsupported_op: " + t +
                       " (dtype=" + (dtype->IsRef() ? dtype->ref : dtype->value.dump()) + ")");
  }
  const core::OpArg* dim_arg = call.Arg("dim");
  if (dim_arg == nullptr || dim_arg->IsRef() || !dim_arg->value.is_number_integer()) {
    return Unsupported("unsupported_op: " + t + " (argument 'dim' is not an integer)");
  }
  const int64_t dim = dim_arg->value.get<int64_t>();
  const int64_t rank = static_cast<int64_t>(input->shape.size());
  const int64_t wrapped = dim < 0 ? dim + std::max<int64_t>(rank, 1) : dim;
  if (wrapped != std::max<int64_t>(rank, 1) - 1) {
    return Unsupported(fmt::format("unsupported_op: {} (dim={} is not the last dim)", t, dim));
  }
  SoftmaxSpec spec;
  spec.log = t.find("log_softmax") != std::string::npos;
  spec.target = t;
  spec.input_node = input->name;
  spec.shape = input->shape;
  spec.cols = rank == 0 ? 1 : input->shape.back();
  for (int64_t d = 0; d + 1 < rank; ++d) spec.rows *= input->shape[d];
  return {spec, ""};
}

SoftmaxTemplate::SoftmaxTemplate(SoftmaxSpec spec, bool multithread)
    : spec_(std::move(spec)), space_(SoftmaxKnobSpace(multithread)) {}

std::vector<nlohmann::json> SoftmaxTemplate::Drafts() const {
  const std::vector<nlohmann::json> curated = {
      {{"algorithm", "three_pass"}, {"math", "libm"}, {"threads", "1"}},
      {{"algorithm", "three_pass"},
       {"math", "vectorized"},
       {"threads", "all"},
       {"block_rows", 1}},
      {{"algorithm", "two_pass_store"},
       {"math", "vectorized"},
       {"threads", "all"},
       {"block_rows", 4}},
      {{"algorithm", "online"}, {"math", "vectorized"}, {"threads", "all"}, {"block_rows", 4}},
      {{"algorithm", "three_pass"}, {"math", "vectorized"}, {"threads", "1"}},
      {{"algorithm", "two_pass_store"}, {"math", "libm"}, {"threads", "all"}, {"block_rows", 16}},
      {{"algorithm", "online"}, {"math", "vectorized"}, {"threads", "1"}},
  };
  const bool multithread = space_.Find("threads")->values.size() > 1;
  std::vector<nlohmann::json> out;
  for (auto knobs : curated) {
    if (!multithread) knobs["threads"] = "1";  // Canonical then drops rows_per_chunk
    out.push_back(space_.Canonical(knobs));
  }
  return out;
}

std::string SoftmaxTemplate::Summary(const nlohmann::json& knobs) const {
  std::string out = KnobText(knobs.at("algorithm")) + ", " +
                    (knobs.at("math") == "vectorized" ? "vectorized exp prelude" : "libm exp");
  if (knobs.at("threads") == "all") {
    out += fmt::format(", all threads over rows, chunks of {} rows",
                       knobs.at("block_rows").get<int64_t>());
  } else {
    out += ", 1 thread";
  }
  return out;
}

std::string SoftmaxTemplate::RowFunction(const std::string& variant,
                                         const std::string& exp_fn) const {
  const char* name = spec_.log ? "ke_log_softmax_row" : "ke_softmax_row";
  std::string body;
  if (variant == "online") {
    body = "  float m = 0.0f;\n  float s = 0.0f;\n  ke_online_max_sum(x, cols, &m, &s);\n";
  } else {
    body =
        "  const float m = ke_row_max(x, cols);\n  float s = 0.0f;\n#pragma omp simd reduction(+ : "
        "s)\n";
    if (variant == "three_pass") {
      body += "  for (int64_t j = 0; j < cols; ++j) s += EXP(x[j] - m);\n";
    } else if (spec_.log) {  // two_pass_store: keep x - m in y
      body +=
          "  for (int64_t j = 0; j < cols; ++j) {\n    y[j] = x[j] - m;\n    s += EXP(y[j]);\n  "
          "}\n";
    } else {  // two_pass_store: keep exp(x - m) in y
      body +=
          "  for (int64_t j = 0; j < cols; ++j) {\n    const float e = EXP(x[j] - m);\n"
          "    y[j] = e;\n    s += e;\n  }\n";
    }
  }
  const bool stored = variant == "two_pass_store";
  if (spec_.log) {
    body += "  const float log_s = std::log(s);\n#pragma omp simd\n";
    body += stored ? "  for (int64_t j = 0; j < cols; ++j) y[j] -= log_s;\n"
                   : "  for (int64_t j = 0; j < cols; ++j) y[j] = x[j] - m - log_s;\n";
  } else {
    body += "  const float inv = 1.0f / s;\n#pragma omp simd\n";
    body += stored ? "  for (int64_t j = 0; j < cols; ++j) y[j] *= inv;\n"
                   : "  for (int64_t j = 0; j < cols; ++j) y[j] = EXP(x[j] - m) * inv;\n";
  }
  std::string out = variant == "online" ? kOnlineMaxSum : kRowMax;
  out +=
      fmt::format("\n// One row: y = {} over x[0..cols).\n", spec_.log ? "log_softmax" : "softmax");
  out += fmt::format(
      "static void {}(const float* __restrict x, float* __restrict y, int64_t cols) {{\n", name);
  out += body + "}\n";
  return WithExp(out, exp_fn);
}

std::string SoftmaxTemplate::EntryFunction(bool threaded, int64_t rows_per_chunk) const {
  const char* row_fn = spec_.log ? "ke_log_softmax_row" : "ke_softmax_row";
  std::string out =
      "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
      "                                  DLTensor* outputs, int32_t num_outputs) {\n"
      "  if (num_inputs != 1 || num_outputs != 1) return 1;\n"
      "  if (const int rc = ke_check_tensor(inputs[0])) return rc;\n"
      "  if (const int rc = ke_check_tensor(outputs[0])) return rc;\n"
      "  const int64_t n = ke_numel(inputs[0]);\n"
      "  if (ke_numel(outputs[0]) != n) return 3;\n"
      "  const int64_t cols = inputs[0].ndim == 0 ? 1 : inputs[0].shape[inputs[0].ndim - 1];\n"
      "  if (n == 0) return 0;\n"
      "  const int64_t rows = n / cols;\n"
      "  const float* x = ke_float_data(inputs[0]);\n"
      "  float* y = ke_float_data(outputs[0]);\n";
  if (!threaded) {
    out += fmt::format(
        "  for (int64_t r = 0; r < rows; ++r) {}(x + r * cols, y + r * cols, cols);\n", row_fn);
  } else {
    out += fmt::format(
        "  constexpr int64_t kRowsPerChunk = {};  // rows handed to a thread at a time\n"
        "  const int64_t num_chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;\n"
        "#pragma omp parallel for schedule(static) if (num_chunks > 1)\n"
        "  for (int64_t c = 0; c < num_chunks; ++c) {{\n"
        "    const int64_t end = std::min(rows, c * kRowsPerChunk + kRowsPerChunk);\n"
        "    for (int64_t r = c * kRowsPerChunk; r < end; ++r) {{\n"
        "      {}(x + r * cols, y + r * cols, cols);\n"
        "    }}\n"
        "  }}\n",
        rows_per_chunk, row_fn);
  }
  return out + "  return 0;\n}\n";
}

std::string SoftmaxTemplate::Generate(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  const std::string variant = knobs.at("algorithm").get<std::string>();
  const bool vectorized = knobs.at("math") == "vectorized";
  const bool threaded = knobs.at("threads") == "all";
  const int64_t rows_per_chunk = threaded ? knobs.at("block_rows").get<int64_t>() : 0;

  std::string what = fmt::format(
      "{} over the last dim of a float32 tensor of shape {}\n"
      "(input {}; captured as {}):\n"
      "  rows = product of the leading dims ({}), cols = last dim ({}), per row\n",
      spec_.log ? "log_softmax" : "softmax", ShapeText(spec_.shape), spec_.input_node, spec_.target,
      spec_.rows, spec_.cols);
  what += spec_.log ? "  y[j] = x[j] - max(x) - log(sum_k exp(x[k] - max(x)))\n"
                    : "  y[j] = exp(x[j] - max(x)) / sum_k exp(x[k] - max(x))\n";
  what += "Variant " + variant + "; exp from " +
          (vectorized ? "the branch-free prelude (ke_exp)." : "<cmath> (std::exp).");
  const std::string abi = fmt::format(
      "//   inputs[0] = {} (float32 {}), outputs[0] = result (same shape); any shape\n"
      "//   works (rows and cols are read from the input's shape).\n",
      spec_.input_node, ShapeText(spec_.shape));

  const std::string kernel =
      "// ---- kernel --------------------------------------------------------------------\n" +
      RowFunction(variant, vectorized ? "ke_exp" : "std::exp") + "\n" +
      EntryFunction(threaded, rows_per_chunk);
  const std::string prelude = MathPreludeFor(kernel);
  return GeneratedHeader(Name(), what, knobs, abi) + "\n" + GeneratedIncludes() + "\n" +
         (prelude.empty() ? "" : prelude + "\n") + AbiHelpers() + "\n" + kernel;
}

}  // namespace kernelevolve::operators::templates

// Graph matching for the "triton_matmul" template: one 2-D matmul (aten.mm, addmm,
// linear, matmul), its operands ABI inputs read through transposes, followed by an
// elementwise epilogue over the [M, N] result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/op_graph.h"

namespace kernelevolve::operators::templates {

/// How a tensor of the epilogue broadcasts over the [M, N] result tile, by its shape
/// right-aligned to two dims (PyTorch broadcasting): [M, N] full, [N] or [1, N] one
/// value per column ("row" vector, e.g. a bias), [M, 1] one per row, one element.
enum class EpilogueBroadcast { kFull, kRow, kColumn, kScalar };

/// A matmul operand: the ABI input it is read from, and whether the logical operand
/// is that input transposed (aten.t / transpose / permute folded into strides).
struct MatmulOperand {
  int abi_index = -1;
  bool transposed = false;
};

/// An ABI input the epilogue reads, loaded into Python variable `var` ("e0", ...).
struct EpilogueInput {
  int abi_index = -1;
  EpilogueBroadcast broadcast = EpilogueBroadcast::kFull;
  core::DType dtype = core::DType::kFloat32;
  std::string var;
};

/// C[M, N] = epilogue(A[M, K] @ B[K, N]) in Triton spelling.
struct TritonMatmulSpec {
  int64_t m = 0, n = 0, k = 0;
  MatmulOperand a, b;
  core::DType dtype = core::DType::kFloat16;      // A and B (float16, bfloat16 or float32)
  core::DType out_dtype = core::DType::kFloat16;  // C
  std::vector<EpilogueInput> inputs;
  /// "t0 = acc + e0  # aten.add.Tensor", applied in order to the float32 accumulator `acc`.
  std::vector<std::string> lines;
  std::string result_var = "acc";
  std::vector<std::string> ops;  // the matmul op, then the epilogue ops ("addmm", "relu")
  /// The reference runs this float32 product in TF32 (core::ReferenceTf32::matmul), so
  /// input_precision may be "tf32". Set by the caller from the problem, not the graph.
  bool reference_tf32 = false;
};

/// The match: a spec, or why the graph is a matmul the template cannot take.
struct TritonMatmulMatch {
  std::optional<TritonMatmulSpec> spec;
  std::string unsupported;  // "unsupported_graph: ...", "unsupported_op: ..." when !spec
};

/// True when `target` is a matmul the template knows (aten.mm / addmm / linear /
/// matmul) or one it refuses (aten.bmm, baddbmm).
bool IsMatmulTarget(const std::string& target);

/// Matches `graph` (see the file comment). Accepted: leading views of inputs
/// (aten.t, transpose.int, permute [1, 0], and view/unsqueeze/expand/reshape of
/// epilogue inputs), exactly one 2-D matmul whose operands are float16, bfloat16 or
/// float32 ABI inputs of one dtype, then calls with a Triton elementwise rule
/// (triton_expr.h) whose operands broadcast over [M, N] (EpilogueBroadcast), the
/// single output being the matmul or an epilogue node of shape [M, N]. addmm's beta
/// and alpha, and linear's bias, become epilogue lines. Returns nullopt when the
/// graph holds no matmul (another template may apply).
std::optional<TritonMatmulMatch> MatchTritonMatmul(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::templates

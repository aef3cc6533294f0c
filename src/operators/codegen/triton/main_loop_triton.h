// Triton main loops of the loop-nest printer (issue 18): a reduction that is a matrix
// product (ir/contraction.h) or a convolution (ir/convolution.h) runs as a tiled
// tl.dot loop over BLOCK_M x BLOCK_K and BLOCK_K x BLOCK_N operand tiles with a
// float32 accumulator tile, instead of the [XBLOCK, RBLOCK] reduction tile, which has
// no tensor-core path and re-reads each operand element once per output element.
// Convolutions run as an implicit GEMM (K. Chellapilla, S. Puri and P. Simard, "High
// Performance Convolutional Neural Networks for Document Processing", IWFHR 2006): the
// im2col tile of the input is gathered straight from the input in the loop, with the
// padding as a load mask. The kernel writes the definition's dense row-major buffer;
// epilogues stay the kernels that read it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/dtype.h"
#include "operators/ir/contraction.h"
#include "operators/ir/convolution.h"
#include "operators/ir/epilogue_fusion.h"
#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::codegen {

/// Tile knobs of the main loops (the knob vocabulary's names). Each block is clamped
/// to the next power of two of its extent and at least 16 (tl.dot's smallest tile).
struct TritonMainLoopSchedule {
  int block_m = 64;    // "block_m": output rows per program
  int block_n = 64;    // "block_n": output columns per program
  int block_k = 32;    // "block_k": depth per main-loop step
  int num_warps = 4;   // "num_warps"
  int num_stages = 3;  // "num_stages": software-pipelined operand tiles in flight
  /// "input_precision" of tl.dot over float32 operands: "ieee", "tf32x3" or "tf32"
  /// (templates::InputPrecisionKnob). "tf32" applies to the main loops the reference
  /// itself runs in TF32 (ReferenceRunsInTf32 with the two flags below); the others get
  /// "tf32x3".
  std::string input_precision = "ieee";
  bool tf32_conv = false;    // core::ReferenceTf32::conv
  bool tf32_matmul = false;  // core::ReferenceTf32::matmul
  bool tf32_rnn = false;     // core::ReferenceTf32::rnn
};

/// Whether the reference runs main loop `def` in TF32: a convolution with `conv_tf32`
/// (cuDNN under torch.backends.cudnn.allow_tf32), a matrix product with `matmul_tf32`,
/// or with `rnn_tf32` where the product is one of an nn.LSTM / GRU / RNN's
/// (def.backend "cudnn": eager PyTorch runs the whole layer in cuDNN, whose gate GEMMs
/// were TF32 kernels in an H100 profile of problems/rnn under the default flags).
bool ReferenceRunsInTf32(const ir::TensorProgram& program, const ir::TensorDef& def, bool conv_tf32,
                         bool matmul_tf32, bool rnn_tf32);

/// Whether the Triton loop nest runs `c` as a tl.dot main loop: not a matrix-vector
/// product (ir::IsMatrixVector: no operand reuse for a tile to exploit).
bool TritonRunsContraction(const ir::Contraction& c);

/// Whether it runs `c` as an implicit GEMM: at least 8 output channels per group and a
/// depth of at least 16 (a depthwise convolution's 1 x 9 products would waste 15/16 of
/// every tl.dot tile; it keeps the plain reduction).
bool TritonRunsConvolution(const ir::Convolution& c);

/// SMs of the GPUs the Triton drafts are tuned for: an H100 SXM5 and an H200 have 132
/// (NVIDIA H100 Tensor Core GPU Architecture whitepaper, 2022).
inline constexpr int64_t kDraftGpuSms = 132;

/// Whether the Triton loop nest runs `def` as a tl.dot main loop: a contraction or a
/// convolution as above, of sizes known when generating (the program reads no size at
/// run time).
bool TritonRunsMainLoop(const ir::TensorProgram& program, const ir::TensorDef& def);

/// An element-wise epilogue applied to the accumulator tile as it is stored
/// (ir/epilogue_fusion.h). Before `print` runs, the kernel has defined `acc` (the
/// float32 [BLOCK_M, BLOCK_N] tile), `mask` (its elements inside the output), `zero`
/// (an int64 tile of zeros) and the heavy definition's index vars i<d> (tiles or
/// scalars that broadcast to the tile).
struct TritonEpilogue {
  int target = -1;  // the definition stored instead of the product
  core::DType dtype = core::DType::kFloat32;
  std::vector<int> tensors;  // tensors the epilogue loads: extra kernel parameters
  /// Appends the lines computing the stored value (indented four spaces) to `lines`
  /// and returns the value's name.
  std::function<std::string(std::string& lines)> print;
};

/// One printed kernel: its @triton.jit text (named `_k<out>`) and the entry's launch line.
struct TritonKernelText {
  std::string kernel;
  std::string launch;  // one line, indented for the entry's body
};

/// The main-loop kernel of `def` (writing its buffer, float32, or with `epilogue` the
/// epilogue's), or nullopt when !TritonRunsMainLoop(program, def).
std::optional<TritonKernelText> PrintMainLoopTriton(const ir::TensorProgram& program,
                                                    const ir::TensorDef& def,
                                                    const TritonMainLoopSchedule& s,
                                                    const TritonEpilogue* epilogue = nullptr);

/// The epilogues fused into the Triton main loops of `plan` (ir::PlanMainLoopEpilogues
/// over the kernels TritonRunsMainLoop accepts), by heavy kernel.
std::unordered_map<int, ir::MainLoopEpilogue> PlanTritonMainLoopEpilogues(
    const ir::KernelPlan& plan);

/// The tl.dot kernel of contraction `c`, writing definition `out` (dense row-major
/// batch..., M, N) in `store` (float32 or float64). Operand tensors are the entry's
/// locals t<c.a> and t<c.b>. `reference_tf32`: the reference runs this product in TF32
/// (ReferenceRunsInTf32), so input_precision "tf32" is spelled as it is.
TritonKernelText PrintContractionTriton(const ir::Contraction& c, int out, core::DType store,
                                        const TritonMainLoopSchedule& s, bool reference_tf32,
                                        const TritonEpilogue* epilogue = nullptr);

/// The implicit-GEMM kernel of convolution `c`, writing definition `out` (dense
/// row-major [N, cout, out...], or [cout, out...] unbatched) in `store`.
/// `reference_tf32` as for PrintContractionTriton.
TritonKernelText PrintConvolutionTriton(const ir::Convolution& c, int out, core::DType store,
                                        const TritonMainLoopSchedule& s, bool reference_tf32,
                                        const TritonEpilogue* epilogue = nullptr);

}  // namespace kernelevolve::operators::codegen

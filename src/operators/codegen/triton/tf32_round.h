// Plain TF32 tensor-core products rounded as the reference's are.
//
// tl.dot(..., input_precision="tf32") hands float32 registers to the tensor cores, which
// read only their upper 19 bits: the operands are truncated toward zero (Triton's tf32 is
// much less accurate than PyTorch's: triton-lang/triton#4574), while cuBLAS and cuDNN
// round float32 operands to the nearest TF32 value. Truncation's error is biased, so it
// grows with the depth where rounding's cancels: with it, a few elements of each ResNet
// convolution missed the tolerance that follows cuDNN's own TF32 error (H100,
// 2026-12-06). A "tf32" dot therefore takes operands rounded first: the entry passes
// rounded copies (_ke_tf32, one elementwise pass over each operand), since rounding the
// tiles inside the loop, between the load and the dot, took the operands off Hopper's
// pipelined shared-memory path and ran ResNet convolutions 3-6x slower (H100,
// 2026-12-06); only where the kernel's epilogue reads an operand buffer too does the
// loop round its tiles. Under TRITON_INTERPRET=1 tl.dot multiplies in float32 whatever
// input_precision says, so the helper leaves values as they are there (the module's
// _KE_TF32_ROUNDS).
#pragma once

#include <string>

namespace kernelevolve::operators::codegen {

/// Name of the @triton.jit helper that rounds a float32 tile to the nearest TF32 value.
inline constexpr const char* kRoundTf32Name = "_ke_round_tf32";
/// Name of the module's Python function that returns a rounded copy of a tensor.
inline constexpr const char* kRoundedCopyName = "_ke_tf32";

/// The helpers' definitions, to emit once in a module that uses them (the module imports
/// torch and triton): _ke_round_tf32 adds half of
/// TF32's last place (bit 12) to the bit pattern and clears the 13 low bits (round to
/// nearest, ties away from zero, as CUTLASS's round_half_ulp_truncate), leaving
/// infinities and NaN as they are.
inline std::string RoundTf32Helper() {
  return std::string(
             "\n\n# TRITON_INTERPRET=1 multiplies float32 tiles exactly: no TF32 to round to there.\n"
             "_KE_TF32_ROUNDS = tl.constexpr(__import__(\"os\").environ.get(\"TRITON_INTERPRET\", \"0\") != \"1\")\n"
             "\n\n@triton.jit\ndef ") +
         kRoundTf32Name +
         "(x):\n"
         "    # float32 -> nearest TF32 (10 mantissa bits); tl.dot's tf32 truncates instead.\n"
         "    if _KE_TF32_ROUNDS:\n"
         "        bits = x.to(tl.uint32, bitcast=True)\n"
         "        rounded = ((bits + 0x1000) & 0xFFFFE000).to(tl.float32, bitcast=True)\n"
         "        x = tl.where((bits & 0x7F800000) == 0x7F800000, x, rounded)\n"
         "    return x\n"
         "\n\n@triton.jit\n"
         "def _ke_round_tf32_copy(src, dst, n, BLOCK: tl.constexpr):\n"
         "    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)\n"
         "    tl.store(dst + o, " + kRoundTf32Name + "(tl.load(src + o, mask=o < n)), mask=o < n)\n"
         "\n\ndef " + kRoundedCopyName + "(t):\n"
         "    # A copy of float32 tensor t rounded to TF32, for a plain TF32 dot's operand.\n"
         "    out = torch.empty_like(t)\n"
         "    _ke_round_tf32_copy[(triton.cdiv(max(t.numel(), 1), 1024),)](t, out, t.numel(), BLOCK=1024)\n"
         "    return out\n";
}

/// Whether module text calls the rounding helper or the rounded copy (then the module
/// needs RoundTf32Helper()).
inline bool UsesTf32Rounding(const std::string& text) {
  return text.find(std::string(kRoundTf32Name) + "(") != std::string::npos ||
         text.find(std::string(kRoundedCopyName) + "(") != std::string::npos;
}

/// `tensor` (a launch argument) as a rounded copy.
inline std::string RoundedCopy(const std::string& tensor) { return std::string(kRoundedCopyName) + "(" + tensor + ")"; }

/// `operand` as a tl.dot argument: wrapped in the rounding helper when the dot is a plain
/// TF32 product (`tf32`), else as it is.
inline std::string DotOperand(const std::string& operand, bool tf32) {
  return tf32 ? std::string(kRoundTf32Name) + "(" + operand + ")" : operand;
}

}  // namespace kernelevolve::operators::codegen

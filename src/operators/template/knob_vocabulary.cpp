#include "operators/template/knob_vocabulary.h"

namespace kernelevolve::operators::templates {

const std::vector<KnobWord>& KnobVocabulary() {
  static const std::vector<KnobWord> words = {
      // Schedule knobs, shared by the families.
      {"threads", "CPU worker threads: \"1\" or \"all\" (OpenMP over the outer loop)", true},
      {"num_warps", "GPU warps per Triton program or CUDA thread block (32 threads each)", true},
      {"num_stages", "software-pipelining stages of a Triton loop", true},
      {"block", "elements one Triton program, or one CPU thread's chunk, takes along the flat or column dim",
       true},
      {"block_rows", "rows (bags, segments) one Triton program, or one CPU thread's chunk, takes", true},
      {"block_m", "GEMM / attention tile: rows of the output (query rows)", true},
      {"block_n", "GEMM / attention tile: columns of the output (keys); a scan's tile along the scanned dim",
       true},
      {"block_k", "GEMM tile along the contracted dim (on the CPU the packed K panel, kc of Goto and van de Geijn "
                  "2008)",
       true},
      {"block_i", "tile width along the kept inner dim of a reduction or scan over a middle dim", true},
      {"block_r", "tile depth along the reduced dim (the R block of a looped reduction)", true},
      {"short_reduction", "a reduction over a few elements, a count that is not a power of two (a pooling window): "
                          "\"unrolled\" (one lane per output walks them in order) or \"tile\" (an [XBLOCK, RBLOCK] "
                          "tile padded to the next power of two, its lanes combined after the loop)",
       true},
      {"split_block", "elements per partial when one reduction is split over programs or threads", true},
      {"programs_per_row", "Triton programs that share one row in the split layout", true},
      {"group_m", "row blocks launched together for L2 reuse (Triton matmul)", true},
      {"split_k", "GEMM split-K: slices of the contracted dim, one program each, whose float32 partial tiles a "
                  "second kernel adds in order before the epilogue (Triton matmul)",
       true},
      {"tile", "CPU register tile of the GEMM micro-kernel, rows x vectors", true},
      {"vector_width", "floats per vector load and store (CPU SIMD lanes, CUDA float4)", true},
      {"unroll", "vectors per loop step", true},
      {"simd", "\"on\": `#pragma omp simd` inner loops (with the vectorizable math prelude)", true},
      {"input_precision",
       "how Triton's tl.dot multiplies float32 tiles: \"ieee\" (float32 FMA, no tensor cores), \"tf32x3\" "
       "(three TF32 tensor-core products of the operands' high and low parts, NVIDIA CUTLASS's 3xTF32: float32-level "
       "accuracy) or \"tf32\" (one TF32 product, offered only where the reference itself runs the product in TF32: "
       "its convolutions under torch.backends.cudnn.allow_tf32, its matmuls under torch.backends.cuda.matmul.allow_tf32)",
       true},
      {"operand_split",
       "where 3xTF32 splits its float32 operands into TF32 high and low parts: \"per_dot\" (Triton's tl.dot "
       "input_precision=\"tf32x3\", both operands at every product) or \"hoisted\" (by the kernel, a loop-invariant "
       "operand once per program: attention's query block)",
       true},
      {"accumulator", "type of sums and products: \"float64\" (the safe value) or \"float32\"", true},
      {"math", "implementation of exp, log, tanh, erf: \"libm\", \"vectorized\" (the math prelude), "
               "\"avx512\" (its explicit AVX-512 variants), \"fast\" (CUDA intrinsics)",
       true},
      {"cuda_graph", "\"yes\": the entry replays its kernels' launches as one captured CUDA graph per set of "
                     "buffers (Triton programs of many launches)",
       true},
      {"persistent", "a persistent grid of programs looping over rows (Triton)", true},
      {"prefetch", "software prefetch distance in rows (0: none)", true},
      {"gather", "indices gathered per step of a Triton embedding or index_add program", true},
      // A family's own choices.
      {"algorithm", "the family's algorithm (softmax passes, sort or unique method, scan form, index_add form)",
       false},
      {"main_loop", "loop-nest contraction: plain \"loops\" or the \"tiled\" packed GEMM main loop", false},
      {"reduce_loop", "loop nest: reduced loops \"inner\" or \"outer\" of a row block", false},
      {"loop_order", "which loop is outer for a reduction or scan over a middle dim", false},
      {"row_buffer", "stage a strided row in a contiguous buffer first", false},
      {"layout", "Triton reduction layout: rows, columns or split", false},
      {"pass", "Triton reduction: one \"single\" pass or a \"looped\" one over R", false},
      {"mode", "CUDA reduction: one thread, warp or block per row", false},
      {"digit_bits", "radix digit width of unique's radix sort", false},
  };
  return words;
}

const KnobWord* FindKnobWord(std::string_view name) {
  for (const KnobWord& w : KnobVocabulary()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

}  // namespace kernelevolve::operators::templates

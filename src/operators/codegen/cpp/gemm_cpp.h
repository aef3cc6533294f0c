// The C++ main loop of a contraction (ir/contraction.h): a cache-blocked, packed,
// register-tiled float32 GEMM after K. Goto and R. van de Geijn, "Anatomy of
// High-Performance Matrix Multiplication", ACM TOMS 34(3), 2008, and F. Van Zee and
// R. van de Geijn, "BLIS: A Framework for Rapidly Instantiating BLAS Functionality",
// ACM TOMS 41(3), 2015: a KC x NC chunk of B is packed into NR-column slivers, an
// MC x KC block of A into MR-row slivers, and an MR x NR micro-kernel accumulates in
// vector registers (GCC vector extensions, one vector = the machine's lanes, so the
// same text compiles to AVX2, AVX-512 or SSE2). Threads take (MC-row block,
// NC-column chunk) tasks; operands may have any element strides (transposes and
// broadcasts are read while packing).
#pragma once

#include <functional>
#include <string>

#include "operators/ir/contraction.h"

namespace kernelevolve::operators::codegen {

/// Register tile and cache blocking of the GEMM main loop.
struct GemmTile {
  int mr = 6;          // rows of the micro-kernel
  int nr_vectors = 2;  // columns of the micro-kernel, in vectors
  int lanes = 8;       // float32 lanes per vector (8: AVX2, 16: AVX-512)
  int kc = 256;        // depth of a packed panel (elements of K)
  int NR() const { return nr_vectors * lanes; }
};

/// The helper functions (ke_gemm_scratch, ke_gemm_pack_a, ke_gemm_pack_b,
/// ke_gemm_micro, ke_gemm) and functors (ke_gemm_identity, ke_gemm_strided_b) for
/// `tile`, as C++17 text for the generated translation unit (needs <cstdint>,
/// <cstring>, <memory>, <algorithm>, <type_traits>). ke_gemm takes a B packer
/// (ke_gemm_strided_b, or conv_cpp.h's im2col packer) and an epilogue functor applied
/// to every value as the last K panel's micro-tile is stored. Threads take (MC-row
/// block, NC-column chunk) tasks, each running all K panels with its own packed A
/// block and B chunk in a per-thread buffer reused across calls.
std::string GemmHelpersCpp(const GemmTile& tile);

/// The first line of a fused epilogue lambda, `ke_epi(row, col, acc)`, for GemmCallCpp
/// and conv_cpp.h: always inlined, so that the micro-kernel's `omp simd` store loop
/// vectorizes (GCC 12 kept the lambda out of line, one call per stored element, when a
/// program has several products). No trailing return type: GCC before 12 rejects an
/// attribute before `->` (GCC PR c++/90333); the body returns a float.
inline constexpr const char* kEpilogueLambdaHead =
    "const auto ke_epi = [&](int64_t ke_row, int64_t ke_col, float ke_acc) __attribute__((always_inline)) {\n";

/// Whether the packed GEMM pays for product `c`: not for a matrix-vector product (one
/// row or one column), whose packed operand would be read once, at twice the memory
/// traffic; the loop nest runs it with a vectorized inner sum (or, when the reduced
/// index is strided, outputs side by side under reduce_loop = "outer").
inline bool GemmPays(const ir::Contraction& c) { return !ir::IsMatrixVector(c); }

/// GemmCallCpp's default: batches run on threads when there are at least this many
/// (fewer share each GEMM's tiles instead).
inline constexpr int64_t kMinParallelBatches = 8;

/// The loop over a batch of products (GemmCallCpp, ConvCallCpp), `bi` from 0 to
/// `batches`, around `body(indent, inner_parallel)`: the statements of one product at
/// `indent`, `inner_parallel` the C++ value of its GEMM's `parallel` argument. Without
/// `parallel`, a plain loop. With it, threads share the loop when it has at least
/// `min_parallel_batches` entries; from 2 below that, the loop is printed twice and
/// ke_gemm_by_batch picks at run time: threaded, one product a thread, when the batches
/// split evenly over the threads, else plain with each product's tiles threaded. Needs
/// GemmHelpersCpp's text.
std::string BatchLoopCpp(int64_t batches, bool parallel, int64_t min_parallel_batches, const std::string& indent,
                         const std::function<std::string(const std::string&, const std::string&)>& body);

/// A half-plane `row * r + col * c + constant >= 0` of a product's output matrix (r, c:
/// its row and column), the GEMM's coordinates. GemmCallCpp's `live`: the epilogue reads
/// the product only where every bound holds (where(c <= r, acc, 0) of a tril: -1 * c + 1 *
/// r >= 0); a micro-tile on which one of them fails everywhere is not multiplied.
struct GemmLiveBound {
  int64_t row = 0, col = 0, constant = 0;
};

/// Statements writing `c` into t<out_id> (dense row-major, batch..., M, N) from
/// t<c.a> and t<c.b>, as printed by the loop-nest emitter (`indent` for each line).
/// `epilogue`, when set, prints the statements of the fused epilogue lambda's body:
/// it sees the product's value `ke_acc` (float) and the output's index variables
/// i0 .. i<rank-1> (int64_t) and ends in `return VALUE;` (float), the value stored;
/// without it the product is stored as is. `live` (with an epilogue): the region where
/// the epilogue's value depends on the product (GemmLiveBound). With `parallel`, OpenMP
/// threads share the batch loop or each GEMM's tiles (BatchLoopCpp).
std::string GemmCallCpp(const ir::Contraction& c, int out_id, bool parallel, const std::string& indent,
                        const std::function<std::string(const std::string&)>& epilogue = nullptr,
                        int64_t min_parallel_batches = kMinParallelBatches,
                        const std::vector<GemmLiveBound>& live = {});

}  // namespace kernelevolve::operators::codegen

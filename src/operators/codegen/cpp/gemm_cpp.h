// The C++ main loop of a contraction (ir/contraction.h): a cache-blocked, packed,
// register-tiled float32 GEMM after K. Goto and R. van de Geijn, "Anatomy of
// High-Performance Matrix Multiplication", ACM TOMS 34(3), 2008, and F. Van Zee and
// R. van de Geijn, "BLIS: A Framework for Rapidly Instantiating BLAS Functionality",
// ACM TOMS 41(3), 2015: a KC x N panel of B is packed into NR-column slivers, an
// MC x KC block of A into MR-row slivers, and an MR x NR micro-kernel accumulates in
// vector registers (GCC vector extensions, one vector = the machine's lanes, so the
// same text compiles to AVX2, AVX-512 or SSE2). Threads take (MC-row block,
// NC-column chunk) tasks; operands may have any element strides (transposes and
// broadcasts are read while packing).
#pragma once

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

/// The helper functions (ke_gemm_pack_a, ke_gemm_pack_b, ke_gemm_micro, ke_gemm) for
/// `tile`, as C++17 text for the generated translation unit (needs <cstdint>,
/// <cstring>, <memory>, <algorithm>).
std::string GemmHelpersCpp(const GemmTile& tile);

/// Statements writing `c` into t<out_id> (dense row-major, batch..., M, N) from
/// t<c.a> and t<c.b>, as printed by the loop-nest emitter (`indent` for each line).
/// With `parallel`, OpenMP threads share the batch loop when it has at least
/// `min_parallel_batches` entries, else each GEMM's tiles.
std::string GemmCallCpp(const ir::Contraction& c, int out_id, bool parallel, const std::string& indent,
                        int64_t min_parallel_batches = 8);

}  // namespace kernelevolve::operators::codegen

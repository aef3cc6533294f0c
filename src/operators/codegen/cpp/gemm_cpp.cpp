#include "operators/codegen/cpp/gemm_cpp.h"

#include <fmt/format.h>

#include <algorithm>

#include "operators/codegen/cpp/register_transpose.h"
#include "operators/ir/loop_ir.h"

namespace kernelevolve::operators::codegen {
namespace {

// {0} MR, {1} NV (vectors per row of the tile), {2} lanes, {3} KC, {4} MC, {5} NC.
const char* kGemmTemplate = R"CPP(// ---- GEMM main loop (Goto & van de Geijn 2008; BLIS, Van Zee & van de Geijn 2015) ----
// Micro-kernel {0} x {1} vectors of {2} floats; KC = {3}, MC = {4}, NC = {5}.
#ifdef _OPENMP
#include <omp.h>
#endif
typedef float ke_vf __attribute__((vector_size({2} * sizeof(float)), aligned(sizeof(float)), may_alias));
static constexpr int64_t KE_MR = {0}, KE_NV = {1}, KE_LANES = {2}, KE_NR = {1} * {2};
static constexpr int64_t KE_KC = {3}, KE_MC = {4}, KE_NC = {5};
// Packing one element of A or B takes about as long as 24 multiply-adds of the
// micro-kernel: 0.2-0.5 ns an element against 150 GFLOP/s a thread (AVX-512 VM).
static constexpr int64_t KE_PACK_COST = 24;

// The epilogue of a product that has none: the value itself.
struct ke_gemm_identity {{
  float operator()(int64_t, int64_t, float v) const {{ return v; }}
}};

// live(row0, rows, col0, cols): whether the epilogue reads the product anywhere on that
// tile. This one: everywhere (a product without a triangular mask).
struct ke_gemm_all_live {{
  bool operator()(int64_t, int64_t, int64_t, int64_t) const {{ return true; }}
}};

// A float buffer of at least `n` elements owned by the calling thread, reused by every
// later call on that thread with the same Slot: allocated once per thread, not per
// product. Slot 0: a task's packed A block and B chunk; 1: a convolution's padded input.
template <int Slot>
static float* ke_gemm_scratch(size_t n) {{
  static thread_local std::unique_ptr<float[]> buffer;
  static thread_local size_t capacity = 0;
  if (capacity < n) {{
    buffer.reset(new float[n]);
    capacity = n;
  }}
  return buffer.get();
}}

// Rows [0, mc) x depth [0, kc) of A (element strides am, ak) as MR-row slivers: for
// each p, MR consecutive values (zeros past mc). (Register transposes for a row-major
// A, as ke_gemm_pack_b does for a transposed B, gained 7%: packing 1024 x 1024 is bound
// by memory, 294 -> 274 us, AVX-512 VM.)
static void ke_gemm_pack_a(const float* a, int64_t am, int64_t ak, int64_t mc, int64_t kc,
                           float* __restrict dst) {{
  for (int64_t s = 0; s < mc; s += KE_MR) {{
    const int64_t rows = mc - s < KE_MR ? mc - s : KE_MR;
    const float* as = a + s * am;
    for (int64_t p = 0; p < kc; ++p) {{
      for (int64_t r = 0; r < rows; ++r) dst[r] = as[r * am + p * ak];
      for (int64_t r = rows; r < KE_MR; ++r) dst[r] = 0.0f;
      dst += KE_MR;
    }}
  }}
}}

// Depth [0, kc) x columns [0, cols) of B (element strides bk, bn) as one NR-column
// sliver: for each p, NR consecutive values (zeros past cols). A B whose columns are
// contiguous along the depth (bk = 1: the transposed weight of a Linear) is read one
// column run at a time, so that each read is sequential (the sliver is in L1).
static void ke_gemm_pack_b(const float* b, int64_t bk, int64_t bn, int64_t kc, int64_t cols,
                           float* __restrict dst) {{
  if (bk == 1 && bn != 1) {{
    // KE_LANES depths at a time: the rows of the sliver being written stay in L1 while
    // each column's values are spread over them (a column at a time over the whole
    // sliver went through 256 rows, 48 KiB: 690 -> 500 us for a 1024 x 1024 weight,
    // AVX-512 VM). Whole KE_LANES x KE_LANES tiles are transposed in registers
    // (register_transpose.h): 405 -> 229 us for that weight, where a plain B takes 245.
    for (int64_t p0 = 0; p0 < kc; p0 += KE_LANES) {{
      const int64_t depth = kc - p0 < KE_LANES ? kc - p0 : KE_LANES;
      float* const rows = dst + p0 * KE_NR;
      int64_t j0 = 0;
      if (depth == KE_LANES) {{
        for (; j0 + KE_LANES <= cols; j0 += KE_LANES) {{
          ke_tf x[KE_LANES];
          for (int r = 0; r < KE_LANES; ++r) x[r] = *reinterpret_cast<const ke_tf*>(b + (j0 + r) * bn + p0);
          ke_transpose_regs(x);
          for (int p = 0; p < KE_LANES; ++p) *reinterpret_cast<ke_tf*>(rows + p * KE_NR + j0) = x[p];
        }}
      }}
      for (int64_t j = j0; j < cols; ++j) {{
        const float* column = b + j * bn + p0;
        for (int64_t p = 0; p < depth; ++p) rows[p * KE_NR + j] = column[p];
      }}
      for (int64_t j = cols; j < KE_NR; ++j)
        for (int64_t p = 0; p < depth; ++p) rows[p * KE_NR + j] = 0.0f;
    }}
    return;
  }}
  for (int64_t p = 0; p < kc; ++p) {{
    const float* bp = b + p * bk;
    if (bn == 1 && cols == KE_NR) {{
      std::memcpy(dst, bp, KE_NR * sizeof(float));
    }} else {{
      for (int64_t j = 0; j < cols; ++j) dst[j] = bp[j * bn];
      for (int64_t j = cols; j < KE_NR; ++j) dst[j] = 0.0f;
    }}
    dst += KE_NR;
  }}
}}

// B of a strided matrix: pack(p0, kc, j0, cols, dst) packs depth [p0, p0 + kc) x
// columns [j0, j0 + cols) as one sliver.
struct ke_gemm_strided_b {{
  const float* b;
  int64_t bk, bn;
  void operator()(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* __restrict dst) const {{
    ke_gemm_pack_b(b + p0 * bk + j0 * bn, bk, bn, kc, cols, dst);
  }}
}};

// c[0..rows) x [0..cols) (row stride ldc) = (accumulate ? c : 0) + a_sliver * b_sliver;
// on the last panel each value v is stored as epi(row0 + i, col0 + j, v) (the fused
// epilogue: bias, activation, residual, clamp), while the tile is still in L1.
template <class Epi>
static inline void ke_gemm_micro(int64_t kc, const float* __restrict a, const float* __restrict b,
                                 float* __restrict c, int64_t ldc, int64_t rows, int64_t cols,
                                 bool accumulate, bool last, int64_t row0, int64_t col0, const Epi& epi) {{
  ke_vf acc[KE_MR][KE_NV];
  for (int i = 0; i < KE_MR; ++i)
    for (int v = 0; v < KE_NV; ++v) acc[i][v] = ke_vf{{}};
  for (int64_t p = 0; p < kc; ++p) {{
    ke_vf bv[KE_NV];
    for (int v = 0; v < KE_NV; ++v) bv[v] = *reinterpret_cast<const ke_vf*>(b + p * KE_NR + v * KE_LANES);
    for (int i = 0; i < KE_MR; ++i) {{
      const float ai = a[p * KE_MR + i];
      for (int v = 0; v < KE_NV; ++v) acc[i][v] += ai * bv[v];
    }}
  }}
  constexpr bool plain = std::is_same<Epi, ke_gemm_identity>::value;
  if ((plain || !last) && rows == KE_MR && cols == KE_NR) {{
    for (int i = 0; i < KE_MR; ++i)
      for (int v = 0; v < KE_NV; ++v) {{
        ke_vf* dst = reinterpret_cast<ke_vf*>(c + i * ldc + v * KE_LANES);
        *dst = accumulate ? *dst + acc[i][v] : acc[i][v];
      }}
    return;
  }}
  float tile[KE_MR][KE_NR];
  std::memcpy(tile, acc, sizeof(tile));
  for (int64_t i = 0; i < rows; ++i) {{
    float* ci = c + i * ldc;
    if (plain || !last) {{
      for (int64_t j = 0; j < cols; ++j) ci[j] = accumulate ? ci[j] + tile[i][j] : tile[i][j];
    }} else {{
      const int64_t row = row0 + i;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) ci[j] = epi(row, col0 + j, accumulate ? ci[j] + tile[i][j] : tile[i][j]);
    }}
  }}
}}

// The row-block and column-chunk sizes of an m x n product's tasks: at most MC x NC, as
// even as whole MR / NR slivers allow (n = 1024 at NC = 768 as 512 + 512, not 768 + 256:
// a 256 x 1024 x 1024 Linear on 2 threads took 3.6 ms with one task three times the
// other, 2.4 ms with two halves; AVX-512 VM, 2026-12-07). Where that gives fewer tasks
// than threads (64 x 512 is one task at AVX-512's 8 x 48 tile), the rows or the columns
// are split further so that every thread gets one, whichever gives the largest task less
// work: its rows x columns of products plus KE_PACK_COST x (rows + columns) for packing
// its A block and B chunk (each task packs both: narrower chunks pack A once more each,
// shorter blocks B). 320 columns split 192 + 128 in 48-column slivers, 256 rows 128 +
// 128: the rows; a 64 x 512 Linear: the columns, since shorter blocks would pack its
// transposed weight twice (mlp 0.83x -> 0.70x of eager when the rows were split).
static void ke_gemm_blocks(int64_t m, int64_t n, bool parallel, int64_t* mcb, int64_t* ncb) {{
  *mcb = KE_MC;
  *ncb = KE_NC;
  if (m <= 0 || n <= 0) return;
  const auto even = [](int64_t size, int64_t parts, int64_t unit) {{
    return ((size + parts - 1) / parts + unit - 1) / unit * unit;
  }};
  const int64_t mblocks = (m + KE_MC - 1) / KE_MC, nchunks = (n + KE_NC - 1) / KE_NC;
  *mcb = std::min<int64_t>(KE_MC, even(m, mblocks, KE_MR));
  *ncb = std::min<int64_t>(KE_NC, even(n, nchunks, KE_NR));
#ifdef _OPENMP
  const int64_t threads = parallel ? omp_get_max_threads() : 1;
  if (mblocks * nchunks >= threads) return;
  const int64_t cols = std::max<int64_t>(KE_NR, even(n, (threads + mblocks - 1) / mblocks, KE_NR));
  const int64_t rows = std::max<int64_t>(KE_MR, even(m, (threads + nchunks - 1) / nchunks, KE_MR));
  const int64_t by_cols = *mcb * cols + KE_PACK_COST * (*mcb + cols);
  const int64_t by_rows = rows * *ncb + KE_PACK_COST * (rows + *ncb);
  const bool columns = (n >= m && n > KE_NR) || m <= KE_MR;
  if (by_cols < by_rows || (by_cols == by_rows && columns)) {{
    *ncb = cols;
  }} else {{
    *mcb = rows;
  }}
#else
  (void)parallel;
#endif
}}

// Whether a loop of `batches` products (images x groups of a convolution, a bmm's batch)
// runs one product a thread rather than sharing each product's tiles: when the batches
// split evenly over the threads, one parallel loop with nothing left to balance (two
// images of a 32 x 1024 x 144 convolution on 2 threads: 0.63x -> 0.92x of eager, against
// two calls whose tiles each thread shared).
static inline bool ke_gemm_by_batch(int64_t batches) {{
#ifdef _OPENMP
  return batches > 1 && batches % omp_get_max_threads() == 0;
#else
  (void)batches;
  return false;
#endif
}}

// c (m x n, row stride ldc) = epi(A (m x k; strides am, ak) * B (k x n, packed by
// pack_b: ke_gemm_strided_b, or a convolution's im2col packer)). Each task, an
// (MC-row block, NC-column chunk; ke_gemm_blocks), runs every K panel itself: it packs
// its A block and its B chunk into its thread's buffer, then sweeps NR-column slivers
// (outer) and MR-row slivers (inner), so the threads meet at one barrier per call, not two per
// panel (on a busy 2-vCPU machine each barrier of spinning threads cost milliseconds).
// The B chunk is packed once per row block: an overhead of 1 / (2 MC) of the FLOPs.
// A micro-tile where `live` says the epilogue does not read the product (above the
// diagonal of a tril) is not multiplied: its values are epi(row, col, 0).
template <class PackB, class Epi, class Live>
static void ke_gemm_tasks(int64_t m, int64_t n, int64_t k, const float* a, int64_t am, int64_t ak,
                          const PackB& pack_b, float* c, int64_t ldc, bool parallel, const Epi& epi,
                          const Live& live) {{
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {{
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = epi(i, j, 0.0f);
    return;
  }}
  int64_t mcb = KE_MC, ncb = KE_NC;
  ke_gemm_blocks(m, n, parallel, &mcb, &ncb);
  const int64_t mblocks = (m + mcb - 1) / mcb, nchunks = (n + ncb - 1) / ncb;
#pragma omp parallel for collapse(2) schedule(dynamic) if (parallel && mblocks * nchunks > 1)
  for (int64_t ib = 0; ib < mblocks; ++ib) {{
    for (int64_t jb = 0; jb < nchunks; ++jb) {{
      float* const ap = ke_gemm_scratch<0>(static_cast<size_t>((KE_MC + KE_NC) * KE_KC));
      float* const bp = ap + KE_MC * KE_KC;
      const int64_t i0 = ib * mcb, mc = m - i0 < mcb ? m - i0 : mcb;
      const int64_t jc = jb * ncb, nc = n - jc < ncb ? n - jc : ncb;
      for (int64_t p0 = 0; p0 < k; p0 += KE_KC) {{
        const int64_t kc = k - p0 < KE_KC ? k - p0 : KE_KC;
        const bool last = p0 + kc >= k;
        ke_gemm_pack_a(a + i0 * am + p0 * ak, am, ak, mc, kc, ap);
        for (int64_t j0 = 0; j0 < nc; j0 += KE_NR) {{
          pack_b(p0, kc, jc + j0, nc - j0 < KE_NR ? nc - j0 : KE_NR, bp + j0 * kc);
        }}
        for (int64_t j0 = 0; j0 < nc; j0 += KE_NR) {{
          const int64_t cols = nc - j0 < KE_NR ? nc - j0 : KE_NR;
          for (int64_t ir = 0; ir < mc; ir += KE_MR) {{
            const int64_t rows = mc - ir < KE_MR ? mc - ir : KE_MR;
            if (!live(i0 + ir, rows, jc + j0, cols)) {{
              for (int64_t i = 0; last && i < rows; ++i)
                for (int64_t j = 0; j < cols; ++j)
                  c[(i0 + ir + i) * ldc + jc + j0 + j] = epi(i0 + ir + i, jc + j0 + j, 0.0f);
              continue;
            }}
            ke_gemm_micro(kc, ap + ir * kc, bp + j0 * kc, c + (i0 + ir) * ldc + jc + j0, ldc, rows, cols,
                          p0 > 0, last, i0 + ir, jc + j0, epi);
          }}
        }}
      }}
    }}
  }}
}}
// B packed from depth p_off on: the packer of one split-K part.
template <class PackB>
struct ke_gemm_shifted_b {{
  const PackB& pack;
  int64_t p_off;
  void operator()(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* __restrict dst) const {{
    pack(p0 + p_off, kc, j0, cols, dst);
  }}
}};

// ke_gemm_tasks; or, when that would still be one task for several threads (an output
// of one MR x NR tile with a deep K: 8 x 8192 x 48), split K: each thread multiplies a
// K range of at least 2 KC into its own m x n buffer, then the parts are summed (the
// same float32 terms in another order) and the epilogue applied to every value.
template <class PackB, class Epi, class Live = ke_gemm_all_live>
static void ke_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t am, int64_t ak,
                    const PackB& pack_b, float* c, int64_t ldc, bool parallel, const Epi& epi,
                    const Live& live = Live{{}}) {{
#ifdef _OPENMP
  int64_t mcb = KE_MC, ncb = KE_NC;
  ke_gemm_blocks(m, n, parallel, &mcb, &ncb);
  const int64_t tasks = ((m + mcb - 1) / mcb) * ((n + ncb - 1) / ncb);
  const int64_t splits =
      parallel && tasks == 1 && m > 0 && n > 0 ? std::min<int64_t>(omp_get_max_threads(), k / (2 * KE_KC)) : 1;
  if (splits > 1) {{
    std::unique_ptr<float[]> part(new float[static_cast<size_t>(splits * m * n)]);
#pragma omp parallel for schedule(static)
    for (int64_t s = 0; s < splits; ++s) {{
      const int64_t p0 = k * s / splits, p1 = k * (s + 1) / splits;
      ke_gemm_tasks(m, n, p1 - p0, a + p0 * ak, am, ak, ke_gemm_shifted_b<PackB>{{pack_b, p0}},
                    part.get() + s * m * n, n, false, ke_gemm_identity{{}}, ke_gemm_all_live{{}});
    }}
    for (int64_t i = 0; i < m; ++i) {{
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) {{
        float v = 0.0f;
        for (int64_t s = 0; s < splits; ++s) v += part[static_cast<size_t>((s * m + i) * n + j)];
        c[i * ldc + j] = epi(i, j, v);
      }}
    }}
    return;
  }}
#endif
  ke_gemm_tasks(m, n, k, a, am, ak, pack_b, c, ldc, parallel, epi, live);
}}
// ---- end of GEMM main loop ----
)CPP";

}  // namespace

std::string GemmHelpersCpp(const GemmTile& tile) {
  // An A block of MC x KC floats of about 192 KiB (L2): MC 256 at KC 192, 96 at 512. Each
  // row block packs the B chunk again, so a taller block packs B less often: a Linear's
  // transposed weight, 256 x 1024 x 1024 on one thread, 90 -> 109 GFLOP/s with MC 128 -> 256.
  constexpr int kABlockFloats = 192 * 1024 / 4;
  const int mc = std::max(tile.mr, kABlockFloats / tile.kc / tile.mr * tile.mr);
  const int nc = tile.NR() * 16;       // a task's columns: 16 slivers
  // The transposed-B packer's register transpose first (register_transpose.h).
  return RegisterTransposeCpp(tile.lanes) +
         fmt::format(fmt::runtime(kGemmTemplate), tile.mr, tile.nr_vectors, tile.lanes, tile.kc, mc, nc);
}

std::string BatchLoopCpp(int64_t batches, bool parallel, int64_t min_parallel_batches, const std::string& indent,
                         const std::function<std::string(const std::string&, const std::string&)>& body) {
  const std::string head = fmt::format("for (int64_t bi = 0; bi < {}; ++bi) {{\n", batches);
  if (parallel && batches < min_parallel_batches && batches > 1) {
    // Two loops, not one `parallel for if (...)`: with its condition false that pragma
    // still opens a (one-thread) region, and each product's own parallel loop nested in
    // it started new threads every call (3 images on 2 threads: 36 us -> 141 us).
    const std::string in = indent + "  ";
    return fmt::format("{0}if (ke_gemm_by_batch({1})) {{\n"
                       "{2}#pragma omp parallel for schedule(static)\n"
                       "{2}{3}{4}{2}}}\n"
                       "{0}}} else {{\n"
                       "{2}{3}{5}{2}}}\n"
                       "{0}}}\n",
                       indent, batches, in, head, body(in + "  ", "false"), body(in + "  ", "true"));
  }
  const bool by_batch = parallel && batches >= min_parallel_batches;
  return (by_batch ? indent + "#pragma omp parallel for schedule(dynamic)\n" : "") + indent + head +
         body(indent + "  ", parallel && !by_batch ? "true" : "false") + indent + "}\n";
}

std::string GemmCallCpp(const ir::Contraction& c, int out_id, bool parallel, const std::string& indent,
                        const std::function<std::string(const std::string&)>& epilogue,
                        int64_t min_parallel_batches, const std::vector<GemmLiveBound>& live) {
  const int64_t batches = ir::Numel(c.batch);
  const auto body = [&](const std::string& in, const std::string& inner_parallel) {
    std::string out;
    // Each batch dim's index from the flat batch position, then the operands' offsets.
    std::string a_off = std::to_string(c.a_offset), b_off = std::to_string(c.b_offset);
    int64_t stride = 1;
    for (size_t d = c.batch.size(); d-- > 0;) {
      const std::string idx = fmt::format("(bi / {} % {})", stride, c.batch[d]);
      if (c.a_batch[d] != 0) a_off += fmt::format(" + {} * {}", idx, c.a_batch[d]);
      if (c.b_batch[d] != 0) b_off += fmt::format(" + {} * {}", idx, c.b_batch[d]);
      stride *= c.batch[d];
    }
    out += fmt::format("{}const ke_gemm_strided_b ke_pack{{t{} + {}, {}, {}}};\n", in, c.b, b_off, c.b_k, c.b_n);
    std::string epi = "ke_gemm_identity{}";
    if (epilogue) {
      // Output indices: the def's own batch dims (out_batch: the same flat order as the
      // operands' batch, which may split one of them), row, col.
      const std::vector<int64_t>& own = c.out_batch.empty() ? c.batch : c.out_batch;
      out += in + kEpilogueLambdaHead;
      const std::string body_in = in + "  ";
      int64_t own_stride = 1;
      std::vector<std::string> own_index(own.size());
      for (size_t d = own.size(); d-- > 0;) {
        own_index[d] = fmt::format("(bi / {} % {})", own_stride, own[d]);
        own_stride *= own[d];
      }
      for (size_t d = 0; d < own.size(); ++d) {
        out += fmt::format("{}[[maybe_unused]] const int64_t i{} = {};\n", body_in, d, own_index[d]);
      }
      out += fmt::format("{}[[maybe_unused]] const int64_t i{} = ke_row;\n", body_in, own.size());
      out += fmt::format("{}[[maybe_unused]] const int64_t i{} = ke_col;\n", body_in, own.size() + 1);
      out += epilogue(body_in);
      out += in + "};\n";
      epi = "ke_epi";
    }
    std::string live_arg;
    if (epilogue && !live.empty()) {
      // The largest value of each bound over the tile [row0, row0 + rows) x [col0, col0 + cols).
      std::vector<std::string> terms;
      for (const GemmLiveBound& b : live) {
        const std::string r = b.row >= 0 ? "(ke_r0 + ke_nr - 1)" : "ke_r0";
        const std::string col = b.col >= 0 ? "(ke_c0 + ke_nc - 1)" : "ke_c0";
        terms.push_back(fmt::format("INT64_C({}) * {} + INT64_C({}) * {} + INT64_C({}) >= 0", b.row, r, b.col, col,
                                    b.constant));
      }
      out += fmt::format("{}const auto ke_live = [](int64_t ke_r0, int64_t ke_nr, int64_t ke_c0, int64_t ke_nc) {{\n"
                         "{}  return {};\n{}}};\n",
                         in, in, fmt::join(terms, " &&\n" + in + "         "), in);
      live_arg = ", ke_live";
    }
    out += fmt::format("{}ke_gemm({}, {}, {}, t{} + {}, {}, {}, ke_pack, t{} + bi * {}, {}, {}, {}{});\n", in, c.m,
                       c.n, c.k, c.a, a_off, c.a_m, c.a_k, out_id, c.m * c.n, c.n,
                       inner_parallel, epi, live_arg);
    return out;
  };
  return BatchLoopCpp(batches, parallel, min_parallel_batches, indent, body);
}

}  // namespace kernelevolve::operators::codegen

#include "operators/codegen/cpp/attention_cpp.h"

#include <fmt/format.h>

#include "operators/codegen/cpp/register_transpose.h"
#include "operators/template/kernel_template.h"
#include "operators/template/math_prelude.h"

namespace kernelevolve::operators::codegen {
namespace {

/// The entry's checks and size reads, up to the data pointers.
std::string Prologue(const ir::AttentionSpec& s) {
  std::string out = "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
                    "                                   DLTensor* outputs, int32_t num_outputs) {\n";
  out += fmt::format("  if (num_inputs < {} || num_outputs != 1) return 1;\n", s.num_inputs);
  out += fmt::format("  const DLTensor& Q = inputs[{}];\n  const DLTensor& K = inputs[{}];\n  const DLTensor& V = inputs[{}];\n",
                     s.q, s.k, s.v);
  out += "  DLTensor& Y = outputs[0];\n";
  out += fmt::format("  for (const DLTensor* t : {{&Q, &K, &V, static_cast<const DLTensor*>(&Y)}}) {{\n"
                     "    if (ke_check_tensor(*t) || t->ndim != {}) return 2;\n"
                     "  }}\n",
                     s.rank);
  // Sizes from the tensors: q and y [B, H, L, E], k and v [B, H, S, E]; rank 3 has no
  // head dim (H = 1).
  const std::vector<std::string> q_dims = s.rank == 3 ? std::vector<std::string>{"B", "L", "E"}
                                                      : std::vector<std::string>{"B", "H", "L", "E"};
  std::vector<std::string> kv_dims = q_dims;
  kv_dims[s.rank - 2] = "S";
  out += fmt::format("  // Sizes from the tensors: q [{}], k and v [{}]{}.\n", fmt::join(q_dims, ", "),
                     fmt::join(kv_dims, ", "), s.rank == 3 ? " (one head)" : "");
  std::vector<std::string> reads;
  for (int d = 0; d < s.rank; ++d) reads.push_back(fmt::format("{} = Q.shape[{}]", q_dims[d], d));
  if (s.rank == 3) reads.insert(reads.begin() + 1, "H = 1");
  reads.push_back(fmt::format("S = K.shape[{}]", s.rank - 2));
  out += fmt::format("  const int64_t {};\n", fmt::join(reads, ", "));
  auto same_shape = [&](const std::string& t, const std::vector<std::string>& dims) {
    std::vector<std::string> ne;
    for (int d = 0; d < s.rank; ++d) ne.push_back(fmt::format("{}shape[{}] != {}", t, d, dims[d]));
    return fmt::format("({})", fmt::join(ne, " || "));
  };
  out += fmt::format("  for (const DLTensor* t : {{&K, &V}}) {{\n    if {} return 3;\n  }}\n", same_shape("t->", kv_dims));
  out += fmt::format("  if {} return 3;\n", same_shape("Y.", q_dims));
  if (s.mask >= 0) {
    out += fmt::format("  const DLTensor& M = inputs[{}];\n", s.mask);
    out += s.mask_bool ? "  if (M.dtype.code != kDLUInt || M.dtype.bits != 8 || M.dtype.lanes != 1 || ke_check_layout(M)) return 2;\n"
                       : "  if (ke_check_tensor(M)) return 2;\n";
    // Rank 3 has no head dim: the mask broadcasts to [B, L, S] and ms[1] stays 0.
    out += fmt::format(
        "  // The mask broadcasts to [{0}]: right-aligned, a size-1 dim repeats (stride 0).\n"
        "  if (M.ndim > {1}) return 3;\n"
        "  const int64_t full[4] = {{B, H, L, S}};\n"
        "  const int dims[{1}] = {{{2}}};  // the mask's dims as dims of [B, H, L, S]\n"
        "  int64_t ms[4] = {{0, 0, 0, 0}};\n"
        "  for (int64_t x = {1} - 1, stride = 1, md = M.ndim - 1; x >= 0; --x, --md) {{\n"
        "    const int d = dims[x];\n"
        "    const int64_t size = md >= 0 ? M.shape[md] : 1;\n"
        "    if (size != 1 && size != full[d]) return 3;\n"
        "    ms[d] = size == 1 ? 0 : stride;\n"
        "    stride *= size;\n"
        "  }}\n",
        s.rank == 3 ? "B, L, S" : "B, H, L, S", s.rank, s.rank == 3 ? "0, 2, 3" : "0, 1, 2, 3");
    out += s.mask_bool ? "  const uint8_t* md_all = static_cast<const uint8_t*>(M.data) + M.byte_offset;\n"
                       : "  const float* md_all = ke_float_data(M);\n";
  }
  return out;
}

// The register tiles of both products, as templates so that each tile size is one
// fully unrolled loop nest (the accumulators stay in registers).
constexpr const char* kTiles = R"CPP(// Transposed scores of one tile: st[j][i] = q_i . k_j for RJ keys (K rows kr[u]; the
// first `valid` are stored) x IV vectors of queries (qt's columns from its first):
// per depth e, RJ broadcast key elements against IV vector loads of qt's row e.
template <int RJ, int IV>
static inline __attribute__((always_inline)) void ke_scores_tile(const float* const* kr, const float* qt, int64_t BM,
                                                                 int64_t E, float* st, int64_t valid) {
  ke_avf c[RJ][IV];
#pragma GCC unroll 8
  for (int u = 0; u < RJ; ++u) {
#pragma GCC unroll 4
    for (int w = 0; w < IV; ++w) c[u][w] = ke_avf{};
  }
  for (int64_t e = 0; e < E; ++e, qt += BM) {
    ke_avf qv[IV];
#pragma GCC unroll 4
    for (int w = 0; w < IV; ++w) qv[w] = *reinterpret_cast<const ke_avf*>(qt + w * KE_LANES);
#pragma GCC unroll 8
    for (int u = 0; u < RJ; ++u) {
      const float k = kr[u][e];
#pragma GCC unroll 4
      for (int w = 0; w < IV; ++w) c[u][w] += k * qv[w];
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < RJ; ++u) {
    if (u >= valid) break;
#pragma GCC unroll 4
    for (int w = 0; w < IV; ++w) *reinterpret_cast<ke_avf*>(st + u * BM + w * KE_LANES) = c[u][w];
  }
}

// acc = alpha acc + P v on one tile: RI queries (acc rows, alpha entries) x EV vectors of
// the head dim (from acc's and v's first column); per key j, RI broadcast probabilities
// (st's row j, contiguous over queries) against EV vector loads of v's row j.
template <int RI, int EV>
static inline __attribute__((always_inline)) void ke_pv_tile(float* acc, int64_t E, const float* alpha, const float* st,
                                                             int64_t BM, const float* v, int64_t cols) {
  ke_avf c[RI][EV];
#pragma GCC unroll 8
  for (int u = 0; u < RI; ++u) {
#pragma GCC unroll 4
    for (int w = 0; w < EV; ++w) c[u][w] = *reinterpret_cast<const ke_avf*>(acc + u * E + w * KE_LANES) * alpha[u];
  }
  for (int64_t j = 0; j < cols; ++j, st += BM, v += E) {
    ke_avf vv[EV];
#pragma GCC unroll 4
    for (int w = 0; w < EV; ++w) vv[w] = *reinterpret_cast<const ke_avf*>(v + w * KE_LANES);
#pragma GCC unroll 8
    for (int u = 0; u < RI; ++u) {
      const float p = st[u];
#pragma GCC unroll 4
      for (int w = 0; w < EV; ++w) c[u][w] += p * vv[w];
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < RI; ++u) {
#pragma GCC unroll 4
    for (int w = 0; w < EV; ++w) *reinterpret_cast<ke_avf*>(acc + u * E + w * KE_LANES) = c[u][w];
  }
}
)CPP";

// st[j][r] += m[r][j] for one lanes x lanes tile of a float mask (rows `m2` floats
// apart, keys contiguous), transposed in registers (register_transpose.h): 4 x 16
// shuffles for 256 values on AVX-512, where a gather per 16 values had cost a sixth of
// sdpa_float_mask's time.
constexpr const char* kAddTransposed = R"CPP(static inline __attribute__((always_inline)) void ke_add_transposed(float* st, int64_t BM, const float* m,
                                                                    int64_t m2) {
  ke_tf x[KE_LANES];
#pragma GCC unroll 16
  for (int r = 0; r < KE_LANES; ++r) x[r] = *reinterpret_cast<const ke_tf*>(m + r * m2);
  ke_transpose_regs(x);
#pragma GCC unroll 16
  for (int j = 0; j < KE_LANES; ++j) *reinterpret_cast<ke_tf*>(st + j * BM) += x[j];
}
)CPP";

// The body after the checks. Markers replaced by PrintAttentionCpp: @SCALE@ (the
// scale's statement), @BM@ / @BN@ (block sizes), @RJ@ / @IV@ (the scores tile), @RI@ /
// @PV@ / @PV_TEXT@ (the P v tiles' rows, their calls over the head dim and the comment
// naming them), @PARALLEL@ / @FOR@ (OpenMP lines or nothing), @APPLY@ (mask and causal
// on the transposed scores), @J_END@ (the last key read), @EMPTY_ROW@ /
// @EMPTY_ROW_TEXT@ (a fully masked row's output and its comment).
//
// The scores are kept transposed, [keys, queries], so that the online softmax runs
// along the query vectors (a running max and sum per query lane, no horizontal
// reductions) and q k^T needs the query block transposed once per task rather than each
// key block transposed (K rows are read as they are, one broadcast element at a time).
constexpr const char* kBody = R"CPP(  @SCALE@
  constexpr int64_t BM = @BM@, BN = @BN@;
  const float* qd = ke_float_data(Q);
  const float* kd = ke_float_data(K);
  const float* vd = ke_float_data(V);
  float* yd = ke_float_data(Y);
  const int64_t blocks = (L + BM - 1) / BM;
  const float minus_inf = -std::numeric_limits<float>::infinity();
@PARALLEL@  {
    // Per thread: the query block transposed and scaled [E, BM] (rows past L zero), the
    // scores of one key block transposed [BN, BM] (then their exponentials), the output
    // accumulator [BM, E], and per query the running max, the running sum, this block's
    // max, the shift subtracted before exp and the factor rescaling what was summed.
    std::vector<float> qt(static_cast<size_t>(E * BM)), st(static_cast<size_t>(BN * BM));
    std::vector<float> acc(static_cast<size_t>(BM * E));
    alignas(64) float mrow[BM], lrow[BM], mnew[BM], shift[BM], alpha[BM];
@FOR@    for (int64_t task = 0; task < B * H * blocks; ++task) {
      const int64_t bh = task / blocks, i0 = (task % blocks) * BM;
      const int64_t rows = std::min<int64_t>(BM, L - i0);
      const float* q = qd + (bh * L + i0) * E;
      const float* kb = kd + bh * S * E;
      const float* vb = vd + bh * S * E;
      for (int64_t r = 0; r < BM; ++r) {
        float* qc = qt.data() + r;
        if (r < rows) {
          for (int64_t e = 0; e < E; ++e) qc[e * BM] = q[r * E + e] * scale;
        } else {
          for (int64_t e = 0; e < E; ++e) qc[e * BM] = 0.0f;
        }
        mrow[r] = minus_inf;
        lrow[r] = 0.0f;
      }
      std::fill(acc.begin(), acc.end(), 0.0f);
      @J_END@
      for (int64_t j0 = 0; j0 < j_end; j0 += BN) {
        const int64_t cols = std::min<int64_t>(BN, j_end - j0);
        // st[j][i] = scale q_i . k_(j0 + j); key rows past `cols` repeat the last one and
        // are not stored.
        for (int64_t j = 0; j < cols; j += @RJ@) {
          const float* kr[@RJ@];
          for (int64_t u = 0; u < @RJ@; ++u) kr[u] = kb + (j0 + std::min<int64_t>(j + u, cols - 1)) * E;
          for (int64_t ic = 0; ic < BM; ic += @IV@ * KE_LANES) {
            ke_scores_tile<@RJ@, @IV@>(kr, qt.data() + ic, BM, E, st.data() + j * BM + ic, cols - j);
          }
        }
@APPLY@        // Online softmax along the query lanes: the block's max, exponentials shifted by
        // it (by 0 where every key so far is masked: exp(-inf) = 0 then), the factor
        // exp(old max - new max) for what was summed before.
        for (int64_t i = 0; i < BM; ++i) mnew[i] = mrow[i];
        for (int64_t j = 0; j < cols; ++j) {
          const float* s = st.data() + j * BM;
#pragma omp simd
          for (int64_t i = 0; i < BM; ++i) mnew[i] = s[i] > mnew[i] ? s[i] : mnew[i];
        }
#pragma omp simd
        for (int64_t i = 0; i < BM; ++i) {
          shift[i] = mnew[i] == minus_inf ? 0.0f : mnew[i];
          alpha[i] = ke_exp(mrow[i] - shift[i]);
          lrow[i] *= alpha[i];
          mrow[i] = mnew[i];
        }
        for (int64_t j = 0; j < cols; ++j) {
          float* s = st.data() + j * BM;
#pragma omp simd
          for (int64_t i = 0; i < BM; ++i) {
            const float p = ke_exp(s[i] - shift[i]);
            s[i] = p;
            lrow[i] += p;
          }
        }
        // acc = alpha acc + P v, tiles over the head dim (@PV_TEXT@); the last
        // E mod KE_LANES columns scalar.
        const float* vj = vb + j0 * E;
        for (int64_t r0 = 0; r0 < BM; r0 += @RI@) {
          float* ar = acc.data() + r0 * E;
          int64_t e = 0;
@PV@          if (e < E) {
            for (int64_t u = 0; u < @RI@; ++u) {
              for (int64_t c = e; c < E; ++c) ar[u * E + c] *= alpha[r0 + u];
            }
            for (int64_t j = 0; j < cols; ++j) {
              for (int64_t u = 0; u < @RI@; ++u) {
                const float p = st[j * BM + r0 + u];
                for (int64_t c = e; c < E; ++c) ar[u * E + c] += p * vj[j * E + c];
              }
            }
          }
        }
      }
      // A row whose every key was masked gives @EMPTY_ROW_TEXT@.
      float* y = yd + (bh * L + i0) * E;
      for (int64_t r = 0; r < rows; ++r) {
        const float inv = lrow[r] > 0.0f ? 1.0f / lrow[r] : @EMPTY_ROW@;
#pragma omp simd
        for (int64_t e = 0; e < E; ++e) y[r * E + e] = acc[r * E + e] * inv;
      }
    }
  }
  return 0;
}
)CPP";

void Replace(std::string& text, const std::string& marker, const std::string& with) {
  for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + with.size())) {
    text.replace(at, marker.size(), with);
  }
}

}  // namespace

std::string PrintAttentionCpp(const ir::AttentionSpec& s, const AttentionSchedule& k, const std::string& header) {
  std::string body = kBody;
  Replace(body, "@SCALE@",
          s.scale ? fmt::format("const float scale = static_cast<float>({:.17g});", *s.scale)
                      : "const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(E)));");
  // The query block is whole vectors (the score tiles' columns).
  const int block_m = (std::max(k.block_m, k.lanes) + k.lanes - 1) / k.lanes * k.lanes;
  Replace(body, "@BM@", std::to_string(block_m));
  Replace(body, "@BN@", std::to_string(std::max(k.block_n, 1)));
  // Accumulator registers of a tile: 24 of AVX-512's 32 vector registers, 12 of AVX2's
  // 16 (the rest hold the loaded vectors and broadcasts).
  const int budget = k.lanes >= 16 ? 24 : 12;
  const int iv = std::min(block_m / k.lanes, 4);
  const int rj = std::min(8, budget / iv);
  Replace(body, "@RJ@", std::to_string(rj));
  Replace(body, "@IV@", std::to_string(iv));
  constexpr int kRowsPv = 4;  // divides block_m (a multiple of 8 lanes)
  Replace(body, "@RI@", std::to_string(kRowsPv));
  std::string pv;
  std::vector<std::string> pv_text;
  for (int ev = budget / kRowsPv >= 4 ? 4 : 2; ev >= 1; ev /= 2) {
    pv += fmt::format(
        "          for (; e + {0} * KE_LANES <= E; e += {0} * KE_LANES) {{\n"
        "            ke_pv_tile<{1}, {0}>(ar + e, E, alpha + r0, st.data() + r0, BM, vj + e, cols);\n"
        "          }}\n",
        ev, kRowsPv);
    pv_text.push_back(fmt::format("{} x {} vectors", kRowsPv, ev));
  }
  Replace(body, "@PV@", pv);
  Replace(body, "@PV_TEXT@", fmt::format("{}", fmt::join(pv_text, ", then ")));
  Replace(body, "@EMPTY_ROW_TEXT@", s.masked_row_nan ? "NaN, as eager's softmax of a row of -inf (0 / 0)"
                                                     : "0, as F.scaled_dot_product_attention");
  Replace(body, "@EMPTY_ROW@", s.masked_row_nan ? "std::numeric_limits<float>::quiet_NaN()" : "0.0f");
  Replace(body, "@PARALLEL@", k.threads_all ? "#pragma omp parallel\n" : "");
  Replace(body, "@FOR@", k.threads_all ? "#pragma omp for schedule(dynamic, 1)\n" : "");
  Replace(body, "@J_END@", s.causal ? "// Causal (j <= i): keys past the block's last row are never read.\n"
                                      "      const int64_t j_end = std::min<int64_t>(S, i0 + rows);"
                                    : "const int64_t j_end = S;");
  // Mask and causal on the transposed scores st[j][r] (query i0 + r, key j0 + j); the
  // scale is already in the query block.
  std::string apply;
  if (s.mask >= 0 && s.mask_bool) {
    // True = attend, or true = masked out when inverted (the explicit masked_fill(mask, -inf)).
    apply += fmt::format(
        "        for (int64_t r = 0; r < rows; ++r) {{\n"
        "          const uint8_t* mr = md_all + (bh / H) * ms[0] + (bh % H) * ms[1] + (i0 + r) * ms[2] + j0 * ms[3];\n"
        "          float* sc = st.data() + r;\n"
        "          for (int64_t j = 0; j < cols; ++j) {{\n"
        "            if ({}mr[j * ms[3]]) sc[j * BM] = minus_inf;\n"
        "          }}\n"
        "        }}\n",
        s.mask_inverted ? "" : "!");
  } else if (s.mask >= 0) {
    apply +=
        "        {\n"
        "          // The additive mask, transposed: whole lanes x lanes tiles in registers where\n"
        "          // keys are contiguous in it, the rest a gather along the queries.\n"
        "          const float* mb = md_all + (bh / H) * ms[0] + (bh % H) * ms[1] + i0 * ms[2] + j0 * ms[3];\n"
        "          const int64_t m2 = ms[2], m3 = ms[3];\n"
        "          int64_t r0 = 0;\n"
        "          if (m3 == 1) {\n"
        "            for (; r0 + KE_LANES <= rows; r0 += KE_LANES) {\n"
        "              int64_t j = 0;\n"
        "              for (; j + KE_LANES <= cols; j += KE_LANES) {\n"
        "                ke_add_transposed(st.data() + j * BM + r0, BM, mb + r0 * m2 + j, m2);\n"
        "              }\n"
        "              for (; j < cols; ++j) {\n"
        "#pragma omp simd\n"
        "                for (int64_t r = r0; r < r0 + KE_LANES; ++r) st[j * BM + r] += mb[r * m2 + j];\n"
        "              }\n"
        "            }\n"
        "          }\n"
        "          for (int64_t j = 0; j < cols; ++j) {\n"
        "#pragma omp simd\n"
        "            for (int64_t r = r0; r < rows; ++r) st[j * BM + r] += mb[r * m2 + j * m3];\n"
        "          }\n"
        "        }\n";
  }
  if (s.causal) {
    apply += "        // Causal: key j0 + j is masked for the queries before it (r < j0 + j - i0).\n"
             "        for (int64_t j = 0; j < cols; ++j) {\n"
             "          const int64_t masked = std::min<int64_t>(BM, j0 + j - i0);\n"
             "          for (int64_t r = 0; r < masked; ++r) st[j * BM + r] = minus_inf;\n"
             "        }\n";
  }
  Replace(body, "@APPLY@", apply);
  body = Prologue(s) + body;
  const std::string vector_type = fmt::format(
      "// One machine vector of floats (GCC vector extension; unaligned loads and stores).\n"
      "typedef float ke_avf __attribute__((vector_size({0} * sizeof(float)), aligned(sizeof(float)), may_alias));\n"
      "static constexpr int64_t KE_LANES = {0};\n",
      k.lanes);
  return header + templates::GeneratedIncludes() + "#include <limits>\n#include <vector>\n\n" +
         templates::MathPreludeFor(body) + "\n" + templates::AbiHelpers() + "\n" + vector_type + "\n" + kTiles + "\n" +
         (s.mask >= 0 && !s.mask_bool ? RegisterTransposeCpp(k.lanes) + kAddTransposed + "\n" : "") + body;
}

}  // namespace kernelevolve::operators::codegen

#include "operators/codegen/cpp/attention_cpp.h"

#include <fmt/format.h>

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

// The body after the checks. Markers replaced by PrintAttentionCpp: @SCALE@ (the
// scale's statement), @BM@ / @BN@ (block sizes), @PARALLEL@ / @FOR@ (OpenMP lines or
// nothing), @MASK_ROW@ (mask row offset), @APPLY@ (scale, mask and causal on a score
// row), @J_END@ (the last key read).
constexpr const char* kBody = R"CPP(  @SCALE@
  constexpr int64_t BM = @BM@, BN = @BN@;
  const float* qd = ke_float_data(Q);
  const float* kd = ke_float_data(K);
  const float* vd = ke_float_data(V);
  float* yd = ke_float_data(Y);
  const int64_t blocks = (L + BM - 1) / BM;
  const float minus_inf = -std::numeric_limits<float>::infinity();
@PARALLEL@  {
    // Per thread: K^T of one key block [E, BN], the scores of the query block [BM, BN]
    // (then their exponentials), the running max and sum per row, the output
    // accumulator [BM, E].
    std::vector<float> kt(static_cast<size_t>(E * BN)), sc(static_cast<size_t>(BM * BN));
    std::vector<float> acc(static_cast<size_t>(BM * E)), mrow(BM), lrow(BM);
@FOR@    for (int64_t task = 0; task < B * H * blocks; ++task) {
      const int64_t bh = task / blocks, i0 = (task % blocks) * BM;
      const int64_t rows = std::min<int64_t>(BM, L - i0);
      const float* q = qd + (bh * L + i0) * E;
      const float* kb = kd + bh * S * E;
      const float* vb = vd + bh * S * E;
      for (int64_t r = 0; r < rows; ++r) {
        mrow[r] = minus_inf;
        lrow[r] = 0.0f;
        for (int64_t e = 0; e < E; ++e) acc[r * E + e] = 0.0f;
      }
      @J_END@
      for (int64_t j0 = 0; j0 < j_end; j0 += BN) {
        const int64_t cols = std::min<int64_t>(BN, j_end - j0);
        for (int64_t j = 0; j < cols; ++j) {
          const float* kr = kb + (j0 + j) * E;
          for (int64_t e = 0; e < E; ++e) kt[e * BN + j] = kr[e];
        }
        // Scores q k^T: 4 rows x two vectors of keys in 8 accumulator registers, each
        // pair of K^T vector loads feeding 8 FMAs (columns past `cols` hold finite stale
        // keys and are ignored; BN is a multiple of two vectors).
        for (int64_t r0 = 0; r0 < rows; r0 += 4) {
          const float* qr[4];
          for (int64_t u = 0; u < 4; ++u) qr[u] = q + std::min<int64_t>(r0 + u, rows - 1) * E;
          for (int64_t j = 0; j < cols; j += 2 * KE_LANES) {
            ke_avf a0 = {}, a1 = {}, a2 = {}, a3 = {}, b0 = {}, b1 = {}, b2 = {}, b3 = {};
            for (int64_t e = 0; e < E; ++e) {
              const ke_avf kv = *reinterpret_cast<const ke_avf*>(kt.data() + e * BN + j);
              const ke_avf kw = *reinterpret_cast<const ke_avf*>(kt.data() + e * BN + j + KE_LANES);
              const float q0 = qr[0][e], q1 = qr[1][e], q2 = qr[2][e], q3 = qr[3][e];
              a0 += q0 * kv;
              b0 += q0 * kw;
              a1 += q1 * kv;
              b1 += q1 * kw;
              a2 += q2 * kv;
              b2 += q2 * kw;
              a3 += q3 * kv;
              b3 += q3 * kw;
            }
            const ke_avf a[4] = {a0, a1, a2, a3}, b[4] = {b0, b1, b2, b3};
            for (int64_t u = 0; u < 4 && r0 + u < rows; ++u) {
              *reinterpret_cast<ke_avf*>(sc.data() + (r0 + u) * BN + j) = a[u];
              *reinterpret_cast<ke_avf*>(sc.data() + (r0 + u) * BN + j + KE_LANES) = b[u];
            }
          }
        }
        // Online softmax per row: the new running max rescales what was summed so far.
        for (int64_t r = 0; r < rows; ++r) {
          float* sr = sc.data() + r * BN;
          const int64_t i = i0 + r;
          (void)i;
@APPLY@          float mx = mrow[r];
          for (int64_t j = 0; j < cols; ++j) mx = sr[j] > mx ? sr[j] : mx;
          if (mx == minus_inf) {  // every key so far masked: nothing to add
            for (int64_t j = 0; j < cols; ++j) sr[j] = 0.0f;
            continue;
          }
          const float alpha = ke_exp(mrow[r] - mx);
          float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
          for (int64_t j = 0; j < cols; ++j) {
            const float p = ke_exp(sr[j] - mx);
            sr[j] = p;
            sum += p;
          }
          lrow[r] = lrow[r] * alpha + sum;
          mrow[r] = mx;
          float* ar = acc.data() + r * E;
#pragma omp simd
          for (int64_t e = 0; e < E; ++e) ar[e] *= alpha;
        }
        // acc += P v: 4 rows x two vectors of the head dim in 8 registers, each pair of v
        // vector loads feeding 8 FMAs; then 4 rows x one vector; the last E mod KE_LANES
        // columns scalar.
        const int64_t ev2 = E - E % (2 * KE_LANES), ev = E - E % KE_LANES;
        for (int64_t r0 = 0; r0 < rows; r0 += 4) {
          const float* pr[4];
          float* ar[4];
          for (int64_t u = 0; u < 4; ++u) {
            const int64_t rr = std::min<int64_t>(r0 + u, rows - 1);
            pr[u] = sc.data() + rr * BN;
            ar[u] = acc.data() + rr * E;
          }
          for (int64_t e = 0; e < ev2; e += 2 * KE_LANES) {
            ke_avf c[4], d[4];
            for (int64_t u = 0; u < 4; ++u) {
              c[u] = *reinterpret_cast<const ke_avf*>(ar[u] + e);
              d[u] = *reinterpret_cast<const ke_avf*>(ar[u] + e + KE_LANES);
            }
            for (int64_t j = 0; j < cols; ++j) {
              const ke_avf vv = *reinterpret_cast<const ke_avf*>(vb + (j0 + j) * E + e);
              const ke_avf vw = *reinterpret_cast<const ke_avf*>(vb + (j0 + j) * E + e + KE_LANES);
              const float p0 = pr[0][j], p1 = pr[1][j], p2 = pr[2][j], p3 = pr[3][j];
              c[0] += p0 * vv;
              d[0] += p0 * vw;
              c[1] += p1 * vv;
              d[1] += p1 * vw;
              c[2] += p2 * vv;
              d[2] += p2 * vw;
              c[3] += p3 * vv;
              d[3] += p3 * vw;
            }
            for (int64_t u = 0; u < 4 && r0 + u < rows; ++u) {
              *reinterpret_cast<ke_avf*>(ar[u] + e) = c[u];
              *reinterpret_cast<ke_avf*>(ar[u] + e + KE_LANES) = d[u];
            }
          }
          for (int64_t e = ev2; e < ev; e += KE_LANES) {
            ke_avf c[4];
            for (int64_t u = 0; u < 4; ++u) c[u] = *reinterpret_cast<const ke_avf*>(ar[u] + e);
            for (int64_t j = 0; j < cols; ++j) {
              const ke_avf vv = *reinterpret_cast<const ke_avf*>(vb + (j0 + j) * E + e);
              for (int64_t u = 0; u < 4; ++u) c[u] += pr[u][j] * vv;
            }
            for (int64_t u = 0; u < 4 && r0 + u < rows; ++u) *reinterpret_cast<ke_avf*>(ar[u] + e) = c[u];
          }
          for (int64_t u = 0; u < 4 && r0 + u < rows; ++u) {
            for (int64_t e = ev; e < E; ++e) {
              float t = ar[u][e];
              for (int64_t j = 0; j < cols; ++j) t += pr[u][j] * vb[(j0 + j) * E + e];
              ar[u][e] = t;
            }
          }
        }
      }
      // A row whose every key was masked gives 0, as PyTorch.
      float* y = yd + (bh * L + i0) * E;
      for (int64_t r = 0; r < rows; ++r) {
        const float inv = lrow[r] > 0.0f ? 1.0f / lrow[r] : 0.0f;
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
  Replace(body, "@BM@", std::to_string(k.block_m));
  // A whole number of two-vector chunks of keys.
  const int chunk = 2 * k.lanes;
  Replace(body, "@BN@", std::to_string((std::max(k.block_n, chunk) + chunk - 1) / chunk * chunk));
  Replace(body, "@PARALLEL@", k.threads_all ? "#pragma omp parallel\n" : "");
  Replace(body, "@FOR@", k.threads_all ? "#pragma omp for schedule(dynamic, 1)\n" : "");
  Replace(body, "@J_END@", s.causal ? "// Causal (j <= i): keys past the block's last row are never read.\n"
                                      "      const int64_t j_end = std::min<int64_t>(S, i0 + rows);"
                                    : "const int64_t j_end = S;");
  std::string apply;
  if (s.mask >= 0) {
    apply += "          const int64_t mrow_off = (bh / H) * ms[0] + (bh % H) * ms[1] + i * ms[2];\n";
    if (s.mask_bool) {
      // True = attend, or true = masked out when inverted (the explicit masked_fill(mask, -inf)).
      apply += fmt::format("          for (int64_t j = 0; j < cols; ++j) {{\n"
                           "            sr[j] = md_all[mrow_off + (j0 + j) * ms[3]] ? {} : {};\n"
                           "          }}\n",
                           s.mask_inverted ? "minus_inf" : "sr[j] * scale", s.mask_inverted ? "sr[j] * scale" : "minus_inf");
    } else {
      apply += "#pragma omp simd\n"
               "          for (int64_t j = 0; j < cols; ++j) sr[j] = sr[j] * scale + md_all[mrow_off + (j0 + j) * ms[3]];\n";
    }
  } else {
    apply += "#pragma omp simd\n          for (int64_t j = 0; j < cols; ++j) sr[j] *= scale;\n";
  }
  if (s.causal) apply += "          for (int64_t j = std::max<int64_t>(0, i + 1 - j0); j < cols; ++j) sr[j] = minus_inf;\n";
  Replace(body, "@APPLY@", apply);
  body = Prologue(s) + body;
  const std::string vector_type = fmt::format(
      "// One machine vector of floats (GCC vector extension; unaligned loads and stores).\n"
      "typedef float ke_avf __attribute__((vector_size({0} * sizeof(float)), aligned(sizeof(float)), may_alias));\n"
      "static constexpr int64_t KE_LANES = {0};\n",
      k.lanes);
  return header + templates::GeneratedIncludes() + "#include <limits>\n#include <vector>\n\n" +
         templates::MathPreludeFor(body) + "\n" + templates::AbiHelpers() + "\n" + vector_type + "\n" + body;
}

}  // namespace kernelevolve::operators::codegen

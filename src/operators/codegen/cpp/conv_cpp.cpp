#include "operators/codegen/cpp/conv_cpp.h"

#include <fmt/format.h>

#include <algorithm>

namespace kernelevolve::operators::codegen {
namespace {

const char* kConvHelpers = R"CPP(// ---- implicit GEMM of a convolution (im2col: Chellapilla, Puri & Simard 2006) ----
#if defined(__AVX2__)
#include <immintrin.h>
#endif
// The `channels` channels of x [channels, d, h, w] copied into this thread's buffer (slot 1) as
// [channels, ed, eh, ew] with input position i at i + pad and zeros elsewhere: the
// extent e = (out - 1) * stride + (kernel - 1) * dilation + 1 per dim is every position
// a window reads, so the packer below reads no bounds. Input past the extent (skipped by
// the stride) is not copied. Every element is written: the buffer may hold another
// convolution's input from the last call.
static const float* ke_conv_padded(const float* x, int64_t channels, int64_t d, int64_t h, int64_t w, int64_t ed,
                                   int64_t eh, int64_t ew, int64_t pd, int64_t ph, int64_t pw) {
  float* const buf = ke_gemm_scratch<1>(static_cast<size_t>(channels * ed * eh * ew));
  const int64_t left = std::min(pw, ew), copied = std::max<int64_t>(0, std::min(w, ew - left));
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t z = 0; z < ed; ++z) {
      for (int64_t y = 0; y < eh; ++y) {
        float* const row = buf + ((c * ed + z) * eh + y) * ew;
        const int64_t iz = z - pd, iy = y - ph;
        if (iz < 0 || iz >= d || iy < 0 || iy >= h) {
          std::memset(row, 0, static_cast<size_t>(ew) * sizeof(float));
          continue;
        }
        std::memset(row, 0, static_cast<size_t>(left) * sizeof(float));
        std::memcpy(row + left, x + ((c * d + iz) * h + iy) * w, static_cast<size_t>(copied) * sizeof(float));
        std::memset(row + left + copied, 0, static_cast<size_t>(ew - left - copied) * sizeof(float));
      }
    }
  }
  return buf;
}

// out[j] = in[j * sw] for j < n. AVX-512: one masked load and store per 16 values
// (stride 1), two loads and a permute (stride 2: the ResNet downsampling convolutions),
// a gather otherwise; masked lanes are not read (Intel SDM, VMOVUPS with a writemask:
// faults are suppressed on masked-off elements). AVX2: stride 2 as two loads and two
// shuffles, the rest as loops the compiler vectorizes (stride 1) or not.
static inline __attribute__((always_inline)) void ke_conv_copy(float* __restrict out, const float* in, int64_t n,
                                                               int64_t sw) {
#if defined(__AVX512F__)
  for (int64_t j = 0; j < n; j += 16) {
    const int64_t m = n - j < 16 ? n - j : 16;
    const __mmask16 lanes = static_cast<__mmask16>((1u << m) - 1);
    const float* src = in + j * sw;
    if (sw == 1) {
      _mm512_mask_storeu_ps(out + j, lanes, _mm512_maskz_loadu_ps(lanes, src));
    } else if (sw == 2) {
      const uint32_t read = (2 * m - 1 >= 32 ? ~0u : (1u << (2 * m - 1)) - 1);  // in[0 .. 2(m - 1)]
      const __m512 lo = _mm512_maskz_loadu_ps(static_cast<__mmask16>(read), src);
      const __m512 hi = _mm512_maskz_loadu_ps(static_cast<__mmask16>(read >> 16), src + 16);
      const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
      _mm512_mask_storeu_ps(out + j, lanes, _mm512_permutex2var_ps(lo, even, hi));
    } else {
      const __m512i index = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                               _mm512_set1_epi32(static_cast<int32_t>(sw)));
      _mm512_mask_storeu_ps(out + j, lanes, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), lanes, index, src, 4));
    }
  }
#else
  int64_t j = 0;
#if defined(__AVX2__)
  // Stride 2: the even values of two 8-wide loads. Only while the second load ends
  // before in[2 (n - 1)], the last value read (the buffer may end there).
  if (sw == 2) {
    for (; j + 8 < n; j += 8) {
      const __m256 lo = _mm256_loadu_ps(in + 2 * j), hi = _mm256_loadu_ps(in + 2 * j + 8);
      const __m256 pairs = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));  // lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6
      _mm256_storeu_ps(out + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0))));
    }
  }
#endif
  if (sw == 1) {
    for (; j < n; ++j) out[j] = in[j];
  } else {
    for (; j < n; ++j) out[j] = in[j * sw];
  }
#endif
}

// B = the im2col matrix of one image and group, read while packing: row kk = (ci, kd,
// kh, kw) of the group's input channels and the window, column jj = (od, oh, ow) of
// the output positions. x is the zero-padded input (ke_conv_padded; the input itself
// when there is no padding), so every read is inside it. 1-d and 2-d convolutions are
// 3-d ones with leading size-1 dims. A sliver's columns are copied as runs of input rows.
// Packing 216 x 2048 of a 3 x 3 x 3 convolution over 8 channels of 8 x 16 x 16 took
// 174 us with bounds checked per run, 77 + 6 us (padding) this way (AVX-512, 2026-12-07).
struct ke_conv_b {
  const float* x;        // the group's first input channel of this image, padded
  int64_t cs, zs, ys;    // element strides of a channel, a depth slice and a row of x
  int64_t oh, ow;        // output size (od is implied by the column count)
  int64_t kd, kh, kw;    // window
  int64_t sd, sh, sw;    // stride
  int64_t dd, dh, dw;    // dilation
  void operator()(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* __restrict dst) const {
    // The sliver's columns as runs sharing an output row (od, oh): each run reads one
    // input row per window position, at stride sw. Per run: first column, length and
    // the offset of its first column's window origin; once per sliver.
    int64_t first[KE_NR], len[KE_NR], origin[KE_NR];
    int64_t runs = 0;
    for (int64_t j = 0; j < cols; j += len[runs++]) {
      const int64_t jj = j0 + j, ox = jj % ow;
      first[runs] = j;
      len[runs] = std::min(cols - j, ow - ox);
      origin[runs] = jj / (oh * ow) * sd * zs + jj / ow % oh * sh * ys + ox * sw;
    }
    const int64_t window = kd * kh * kw;
    int64_t ci = p0 / window, r = p0 % window;
    int64_t a = r / (kh * kw), b = r / kw % kh, e = r % kw;
    for (int64_t p = 0; p < kc; ++p) {
      const float* xc = x + ci * cs + a * dd * zs + b * dh * ys + e * dw;
      if (runs == 1 && cols == KE_NR && sw == 1) {
        std::memcpy(dst, xc + origin[0], KE_NR * sizeof(float));
      } else {
        for (int64_t q = 0; q < runs; ++q) ke_conv_copy(dst + first[q], xc + origin[q], len[q], sw);
        for (int64_t j = cols; j < KE_NR; ++j) dst[j] = 0.0f;
      }
      dst += KE_NR;
      if (++e == kw) {
        e = 0;
        if (++b == kh) {
          b = 0;
          if (++a == kd) {
            a = 0;
            ++ci;
          }
        }
      }
    }
  }
};
// ---- end of implicit GEMM ----
)CPP";

/// The 3-d view of per-spatial-dim values: leading entries `fill` for 1-d and 2-d.
std::vector<int64_t> As3d(const std::vector<int64_t>& v, int64_t fill) {
  std::vector<int64_t> out(3 - v.size(), fill);
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

/// Per dim of the 3-d view, the input positions a window reads counted from the first
/// (padding included): (out - 1) * stride + (kernel - 1) * dilation + 1. Both forms read
/// a zero-padded copy of this extent.
std::vector<int64_t> ReadExtent3d(const ir::Convolution& c) {
  const auto o3 = As3d(c.out, 1), k3 = As3d(c.kernel, 1), s3 = As3d(c.stride, 1), d3 = As3d(c.dilation, 1);
  std::vector<int64_t> e3(3);
  for (size_t d = 0; d < 3; ++d) e3[d] = (o3[d] - 1) * s3[d] + (k3[d] - 1) * d3[d] + 1;
  return e3;
}

/// The fused epilogue lambda `ke_epi(ke_row, ke_col, ke_acc)` of convolution `c` at
/// `in`: the output's index variables i0 .. from ke_image and ke_group (declared by the
/// caller), the row within the group and the output position.
std::string EpilogueLambda(const ir::Convolution& c, const std::string& in,
                           const std::function<std::string(const std::string&)>& epilogue) {
  std::string out = in + kEpilogueLambdaHead;
  const std::string body_in = in + "  ";
  int var = 0;
  if (c.batched) out += fmt::format("{}[[maybe_unused]] const int64_t i{} = ke_image;\n", body_in, var++);
  out += fmt::format("{}[[maybe_unused]] const int64_t i{} = ke_group * {} + ke_row;\n", body_in, var++,
                     c.CoutPerGroup());
  // The element's flat position in the output, without dividing the column.
  out += c.batched ? fmt::format("{}[[maybe_unused]] const int64_t ke_own = (i0 * {} + i1) * {} + ke_col;\n", body_in,
                                 c.cout, c.OutPositions())
                   : fmt::format("{}[[maybe_unused]] const int64_t ke_own = i0 * {} + ke_col;\n", body_in,
                                 c.OutPositions());
  int64_t inner = c.OutPositions();
  for (size_t d = 0; d < c.out.size(); ++d) {
    inner /= c.out[d];
    out += fmt::format("{}[[maybe_unused]] const int64_t i{} = ke_col / {} % {};\n", body_in, var++, inner, c.out[d]);
  }
  out += epilogue(body_in);
  out += in + "};\n";
  return out;
}

/// The direct form of a depthwise convolution (ConvRunsDirect). Per (image, output
/// channel), the input channel is first copied into a zero-padded plane (one per
/// thread; its border is zeroed once and never written), so that every output value is
/// a branch-free sum over the window; `#pragma omp simd` runs over an output row. A
/// window of at most kDirectUnrolledTaps positions is printed unrolled, its weights
/// held in registers, one partial sum per window row.
std::string DirectCall(const ir::Convolution& c, int out_id, bool parallel, const std::string& indent,
                       const std::function<std::string(const std::string&)>& epilogue) {
  const auto i3 = As3d(c.in, 1), o3 = As3d(c.out, 1), k3 = As3d(c.kernel, 1), s3 = As3d(c.stride, 1),
             p3 = As3d(c.pad, 0), d3 = As3d(c.dilation, 1);
  const int64_t window = k3[0] * k3[1] * k3[2];
  // The padded plane covers every position a window reads (ReadExtent3d); input
  // position i sits at i + pad, and input beyond the plane (never read: the stride
  // skips it) is not copied.
  const auto e3 = ReadExtent3d(c);
  int64_t copy3[3];
  for (size_t d = 0; d < 3; ++d) copy3[d] = std::max<int64_t>(0, std::min(i3[d], e3[d] - p3[d]));
  const int64_t plane = e3[0] * e3[1] * e3[2];
  auto tap_offset = [&](int64_t a, int64_t b, int64_t e) {
    return (a * d3[0] * e3[1] + b * d3[1]) * e3[2] + e * d3[2];
  };
  std::string out;
  std::string in = indent;
  if (parallel) out += in + "#pragma omp parallel\n";
  out += in + "{\n";
  in += "  ";
  out += fmt::format("{}const std::unique_ptr<float[]> ke_plane(new float[{}]());  // zeros: the padding\n", in,
                     plane);
  if (parallel) out += in + "#pragma omp for schedule(static)\n";
  out += fmt::format("{}for (int64_t bi = 0; bi < {}; ++bi) {{\n", in, c.images * c.cout);
  const std::string outer = in;
  in += "  ";
  out += fmt::format("{}const int64_t ke_image = bi / {}, ke_channel = bi % {}, ke_group = ke_channel / {};\n", in,
                     c.cout, c.cout, c.CoutPerGroup());
  out += fmt::format("{}const float* __restrict ke_x = t{} + (ke_image * {} + ke_group) * {};\n", in, c.x, c.cin,
                     ir::Numel(c.in));
  out += fmt::format("{}const float* __restrict ke_w = t{} + ke_channel * {};\n", in, c.w, window);
  out += fmt::format("{}float* __restrict ke_y = t{} + bi * {};\n", in, out_id, c.OutPositions());
  if (copy3[0] > 0 && copy3[1] > 0 && copy3[2] > 0) {
    out += fmt::format("{}for (int64_t z = 0; z < {}; ++z)\n", in, copy3[0]);
    out += fmt::format("{}  for (int64_t y = 0; y < {}; ++y)\n", in, copy3[1]);
    out += fmt::format("{}    std::memcpy(ke_plane.get() + ((z + {}) * {} + y + {}) * {} + {}, ke_x + (z * {} + y) * {}, {} * sizeof(float));\n",
                       in, p3[0], e3[1], p3[1], e3[2], p3[2], i3[1], i3[2], copy3[2]);
  }
  out += in + "const float* __restrict ke_p = ke_plane.get();\n";
  const bool unrolled = window <= kDirectUnrolledTaps;
  if (unrolled) {
    for (int64_t t = 0; t < window; ++t) out += fmt::format("{}const float ke_w{} = ke_w[{}];\n", in, t, t);
  }
  if (epilogue) out += EpilogueLambda(c, in, epilogue);
  out += fmt::format("{}for (int64_t oz = 0; oz < {}; ++oz) {{\n", in, o3[0]);
  out += fmt::format("{}  for (int64_t oy = 0; oy < {}; ++oy) {{\n", in, o3[1]);
  const std::string row = in + "    ";
  out += fmt::format("{}float* __restrict ke_yr = ke_y + (oz * {} + oy) * {};\n", row, o3[1], o3[2]);
  out += fmt::format("{}const float* __restrict ke_pr = ke_p + (oz * {} + oy * {}) * {};\n", row, s3[0] * e3[1],
                     s3[1], e3[2]);
  out += row + "#pragma omp simd\n";
  out += fmt::format("{}for (int64_t ox = 0; ox < {}; ++ox) {{\n", row, o3[2]);
  const std::string body = row + "  ";
  out += fmt::format("{}const float* ke_pc = ke_pr + ox * {};\n", body, s3[2]);
  if (unrolled) {
    // One partial sum per window row (a, b): independent chains of kw products.
    std::string total;
    int64_t t = 0;
    for (int64_t a = 0; a < k3[0]; ++a) {
      for (int64_t b = 0; b < k3[1]; ++b) {
        const std::string name = fmt::format("ke_s{}", a * k3[1] + b);
        std::string sum;
        for (int64_t e = 0; e < k3[2]; ++e, ++t) {
          sum += fmt::format("{}ke_w{} * ke_pc[{}]", e ? " + " : "", t, tap_offset(a, b, e));
        }
        out += fmt::format("{}const float {} = {};\n", body, name, sum);
        total += (total.empty() ? "" : " + ") + name;
      }
    }
    out += fmt::format("{}ke_yr[ox] = {};\n", body, total);
  } else {
    out += body + "float ke_acc = 0.0f;\n";
    out += fmt::format("{}for (int64_t a = 0; a < {}; ++a)\n", body, k3[0]);
    out += fmt::format("{}  for (int64_t b = 0; b < {}; ++b)\n", body, k3[1]);
    out += fmt::format("{}    for (int64_t e = 0; e < {}; ++e)\n", body, k3[2]);
    out += fmt::format("{}      ke_acc += ke_w[(a * {} + b) * {} + e] * ke_pc[(a * {} + b * {}) * {} + e * {}];\n", body,
                       k3[1], k3[2], d3[0] * e3[1], d3[1], e3[2], d3[2]);
    out += body + "ke_yr[ox] = ke_acc;\n";
  }
  out += row + "}\n";
  if (epilogue) {
    out += fmt::format("{}for (int64_t ox = 0; ox < {}; ++ox) ke_yr[ox] = ke_epi(ke_channel % {}, (oz * {} + oy) * {} + ox, ke_yr[ox]);\n",
                       row, o3[2], c.CoutPerGroup(), o3[1], o3[2]);
  }
  out += in + "  }\n" + in + "}\n";
  out += outer + "}\n";
  out += indent + "}\n";
  return out;
}

}  // namespace

bool ConvRunsDirect(const ir::Convolution& c) {
  return c.groups > 1 && c.CinPerGroup() == 1 && c.CoutPerGroup() <= kDirectMaxChannelMultiplier;
}

std::string ConvHelpersCpp() { return kConvHelpers; }

std::string ConvCallCpp(const ir::Convolution& c, int out_id, bool parallel, const std::string& indent,
                        const std::function<std::string(const std::string&)>& epilogue,
                        int64_t min_parallel_batches) {
  if (ConvRunsDirect(c)) return DirectCall(c, out_id, parallel, indent, epilogue);
  const int64_t batches = c.images * c.groups;
  const int64_t in_positions = ir::Numel(c.in);
  const int64_t m = c.CoutPerGroup(), n = c.OutPositions(), k = c.Depth();
  const auto body = [&](const std::string& in, const std::string& inner_parallel) {
    std::string out;
    out += fmt::format("{}const int64_t ke_image = bi / {}, ke_group = bi % {};\n", in, c.groups, c.groups);
    out += fmt::format("{}const float* ke_x = t{} + (ke_image * {} + ke_group * {}) * {};\n", in, c.x, c.cin,
                       c.CinPerGroup(), in_positions);
    // 1x1, stride 1, no padding and as many outputs as inputs: B is x itself. (More
    // outputs than that read past the input's end, 0: a transposed convolution's phase.)
    bool plain = true;
    for (size_t d = 0; d < c.kernel.size(); ++d) {
      plain = plain && c.kernel[d] == 1 && c.stride[d] == 1 && c.pad[d] == 0 && c.out[d] == c.in[d];
    }
    if (plain) {
      out += fmt::format("{}const ke_gemm_strided_b ke_pack{{ke_x, {}, 1}};\n", in, in_positions);
    } else {
      const auto i3 = As3d(c.in, 1), o3 = As3d(c.out, 1), k3 = As3d(c.kernel, 1), s3 = As3d(c.stride, 1),
                 p3 = As3d(c.pad, 0), d3 = As3d(c.dilation, 1);
      // Strides of the buffer the packer reads: the input's own without padding (every
      // window inside it), else the zero-padded copy's, sized by the read extent.
      const auto e3 = ReadExtent3d(c);
      bool padded = false;
      for (size_t d = 0; d < 3; ++d) padded = padded || p3[d] > 0 || e3[d] > i3[d];
      const auto& x3 = padded ? e3 : i3;
      if (padded) {
        out += fmt::format("{}const float* ke_xp = ke_conv_padded(ke_x, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});\n", in,
                           c.CinPerGroup(), i3[0], i3[1], i3[2], e3[0], e3[1], e3[2], p3[0], p3[1], p3[2]);
      }
      out += fmt::format("{}const ke_conv_b ke_pack{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}};\n", in,
                         padded ? "ke_xp" : "ke_x", x3[0] * x3[1] * x3[2], x3[1] * x3[2], x3[2], o3[1], o3[2], k3[0],
                         k3[1], k3[2], s3[0], s3[1], s3[2], d3[0], d3[1], d3[2]);
    }
    std::string epi = "ke_gemm_identity{}";
    if (epilogue) {
      out += EpilogueLambda(c, in, epilogue);
      epi = "ke_epi";
    }
    out += fmt::format("{}ke_gemm({}, {}, {}, t{} + ke_group * {}, {}, 1, ke_pack, t{} + (ke_image * {} + ke_group * {}) * {}, {}, {}, {});\n",
                       in, m, n, k, c.w, m * k, k, out_id, c.cout, m, n, n,
                       inner_parallel, epi);
    return out;
  };
  return BatchLoopCpp(batches, parallel, min_parallel_batches, indent, body);
}

}  // namespace kernelevolve::operators::codegen

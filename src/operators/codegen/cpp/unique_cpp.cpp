#include "operators/codegen/cpp/unique_cpp.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "operators/codegen/cpp/unique_order_cpp.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::codegen {

using ir::UniqueSpec;
using ir::UniqueOutput;
namespace {

UniqueParts PartsOf(const UniqueSpec& s, const UniqueSchedule& k) {
  UniqueParts parts;
  parts.is_float = s.dtype == core::DType::kFloat32;
  for (UniqueOutput o : s.outputs) {
    parts.values = parts.values || o == UniqueOutput::kValues;
    parts.inverse = parts.inverse || o == UniqueOutput::kInverse;
    parts.counts = parts.counts || o == UniqueOutput::kCounts;
  }
  parts.with_pos = parts.inverse || parts.is_float;
  parts.threads_all = k.threads_all;
  return parts;
}

/// `text` without its "#pragma omp" lines (the one-thread kernels).
std::string StripOmp(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#pragma omp", 0) != 0) out += line + "\n";
  }
  return out;
}

/// T, Key, ke_key (unsigned keys in the values' order), ke_value (int64: the inverse),
/// ke_before (the order) and ke_same (one distinct value).
std::string ValueHelpers(const UniqueParts& parts) {
  if (parts.is_float) {
    return "using T = float;\nusing Key = uint32_t;\n"
           "// NaN after every number; -0.0 and +0.0 tie.\n"
           "static inline bool ke_before(T a, T b) { return a < b || (a == a && b != b); }\n"
           "// One distinct value: == (-0.0 is +0.0; a NaN equals nothing, as torch's != says).\n"
           "static inline bool ke_same(T a, T b) { return a == b; }\n"
           "static inline Key ke_key(T v) {\n"
           "  if (v != v) return 0xFFFFFFFFu;  // every NaN: above +inf\n"
           "  if (v == 0.0f) v = 0.0f;         // -0.0 == +0.0\n"
           "  uint32_t u;\n"
           "  std::memcpy(&u, &v, sizeof u);\n"
           "  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // IEEE 754 bits in total order\n"
           "}\n";
  }
  return "using T = int64_t;\nusing Key = uint64_t;\n"
         "static inline bool ke_before(T a, T b) { return a < b; }\n"
         "static inline bool ke_same(T a, T b) { return a == b; }\n"
         "// Keys in the values' order: the sign bit flipped; ke_value undoes it.\n"
         "static inline Key ke_key(T v) { return static_cast<Key>(v) ^ 0x8000000000000000ull; }\n"
         "static inline T ke_value(Key k) { return static_cast<T>(k ^ 0x8000000000000000ull); }\n";
}

/// Blocks (one per thread), the outputs' record KeOut and ke_fit (the length checks).
std::string OutputHelpers(const UniqueParts& parts) {
  std::string out = parts.threads_all ? "static inline int ke_blocks() { return omp_get_max_threads(); }\n"
                                   : "static inline int ke_blocks() { return 1; }\n";
  out += R"(// Block b of nb over n items: [ke_edge(n, b, nb), ke_edge(n, b + 1, nb)).
static inline int64_t ke_edge(int64_t n, int64_t b, int64_t nb) { return n / nb * b + n % nb * b / nb; }

template <typename P>
static inline P* ke_data(const DLTensor& t) {
  return reinterpret_cast<P*>(static_cast<char*>(t.data) + t.byte_offset);
}

// Scratch memory kept from call to call: on inputs of this size, the page faults of fresh
// blocks cost about as much as the work. Every element is written before it is read, so
// no result depends on an earlier call. A call made while another one holds the kept
// blocks (another thread) takes blocks of its own.
static std::atomic<bool> ke_kept_busy{false};
static std::vector<std::vector<uint64_t>> ke_kept;

struct KeScratch {
  const bool kept = !ke_kept_busy.exchange(true, std::memory_order_acquire);
  std::vector<std::vector<uint64_t>> own;
  size_t used = 0;
  ~KeScratch() {
    if (kept) ke_kept_busy.store(false, std::memory_order_release);
  }
  // The next block, room for `count` items (uninitialized). Throws std::bad_alloc.
  template <typename P>
  P* Take(int64_t count) {
    std::vector<std::vector<uint64_t>>& blocks = kept ? ke_kept : own;
    if (blocks.size() <= used) blocks.emplace_back();
    std::vector<uint64_t>& block = blocks[used++];
    const size_t words = (static_cast<size_t>(count) * sizeof(P) + 7) / 8;
    if (block.size() < words) {
      std::vector<uint64_t>().swap(block);
      block.resize(words);
    }
    return reinterpret_cast<P*>(block.data());
  }
};

// The outputs. length[0] / length[1]: the values' / counts' length as given (-1 when not
// returned); size[0] / size[1]: their output.k.size tensor when bounded, else null.
struct KeOut {
  T* values = nullptr;
  int64_t* inverse = nullptr;
  int64_t* counts = nullptr;
  int64_t length[2] = {-1, -1};
  int64_t* size[2] = {nullptr, nullptr};
};

// 0 when `groups` distinct values fit: at most the bound of a bounded output (else 5),
// exactly the length of another (else 3). Writes the sizes.
static int ke_fit(const KeOut& o, int64_t groups) {
  for (int k = 0; k < 2; ++k) {
    if (o.length[k] < 0) continue;
    if (o.size[k] == nullptr) {
      if (groups != o.length[k]) return 3;
    } else {
      if (groups > o.length[k]) return 5;
      o.size[k][0] = groups;
    }
  }
  return 0;
}
)";
  return out;
}

/// ke_write_groups: the outputs from a sorted order, in two sweeps over blocks (count the
/// runs' starts; write) and the counts as differences of starts.
std::string GroupWriter(const UniqueParts& parts) {
  std::string out = R"(
// Writes the outputs from the ascending order: value(j) is its j-th value, pos[j] that
// value's position in x. A group is a run of equal values; a block that starts inside a
// run continues the group an earlier block opened.
template <typename Value>
static int ke_write_groups(int64_t n, Value value, const int64_t* pos, const KeOut& o) {
  (void)pos;
  const int nb = ke_blocks();
  std::vector<int64_t> first(nb + 1, 0);  // groups opened before each block
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < nb; ++b) {
    int64_t starts = 0;
    for (int64_t j = ke_edge(n, b, nb); j < ke_edge(n, b + 1, nb); ++j) {
      starts += j == 0 || !ke_same(value(j), value(j - 1));
    }
    first[b + 1] = starts;
  }
  for (int b = 0; b < nb; ++b) first[b + 1] += first[b];
  const int64_t groups = first[nb];
  if (int c = ke_fit(o, groups)) return c;
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < nb; ++b) {
    int64_t g = first[b] - 1;
    for (int64_t j = ke_edge(n, b, nb); j < ke_edge(n, b + 1, nb); ++j) {
      const T v = value(j);
      if (j == 0 || !ke_same(v, value(j - 1))) {
        ++g;
)";
  if (parts.values) out += "        o.values[g] = v;\n";
  if (parts.counts) out += "        o.counts[g] = j;  // the group's start, for now\n";
  out += "      }\n";
  if (parts.inverse) out += "      o.inverse[pos[j]] = g;\n";
  out += "    }\n  }\n";
  if (parts.counts) {
    out += "  for (int64_t g = 0; g < groups; ++g) o.counts[g] = (g + 1 < groups ? o.counts[g + 1] : n) - o.counts[g];\n";
  }
  out += "  return 0;\n}\n";
  return out;
}

/// ke_unique_counting (int64): a table over [min, max], else ke_unique_radix.
std::string CountingUnique(const UniqueParts& parts) {
  std::string out = R"(
// Counting: one table slot per value of [min, max] when max - min < 3 n + 1024 (the table
// costs about what a radix pass does per element); else the radix sort.
static int ke_unique_counting(const T* x, int64_t n, const KeOut& o, KeScratch& scratch) {
  T lo = x[0], hi = x[0];
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
  for (int64_t j = 0; j < n; ++j) {
    lo = std::min(lo, x[j]);
    hi = std::max(hi, x[j]);
  }
  const uint64_t base = static_cast<uint64_t>(lo);
  const uint64_t span = static_cast<uint64_t>(hi) - base;  // max - min, without overflow
  if (span >= 3 * static_cast<uint64_t>(n) + 1024) return ke_unique_radix(x, n, o, scratch);
  const int64_t range = static_cast<int64_t>(span) + 1;
  const int nb = ke_blocks();
  // One table per block of x, summed into the first; at most 4 n / range of them (at
  // least 2), so that zeroing and summing them costs no more than counting.
  const int nt = static_cast<int>(std::min<int64_t>(nb, std::max<int64_t>(2, 4 * n / range)));
  int64_t* table = scratch.Take<int64_t>(nt * range);
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < nt; ++b) {
    int64_t* t = table + static_cast<size_t>(b) * range;
    std::fill(t, t + range, 0);
    for (int64_t j = ke_edge(n, b, nt); j < ke_edge(n, b + 1, nt); ++j) ++t[static_cast<uint64_t>(x[j]) - base];
  }
  std::vector<int64_t> first(nb + 1, 0);  // distinct values before each block of the range
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < nb; ++b) {
    int64_t present = 0;
    for (int64_t r = ke_edge(range, b, nb); r < ke_edge(range, b + 1, nb); ++r) {
      int64_t c = table[r];
      for (int t = 1; t < nt; ++t) c += table[static_cast<size_t>(t) * range + r];
      table[r] = c;
      present += c != 0;
    }
    first[b + 1] = present;
  }
  for (int b = 0; b < nb; ++b) first[b + 1] += first[b];
  if (int c = ke_fit(o, first[nb])) return c;
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < nb; ++b) {
    // Branch-free: an empty slot writes where the next full one will (its own group), so
    // the sweep stops at the block's last full slot.
    const int64_t begin = ke_edge(range, b, nb);
    int64_t end = ke_edge(range, b + 1, nb);
    while (end > begin && table[end - 1] == 0) --end;
    int64_t g = first[b];
    for (int64_t r = begin; r < end; ++r) {
      const int64_t c = table[r];
)";
  if (parts.values) out += "      o.values[g] = static_cast<T>(base + static_cast<uint64_t>(r));\n";
  if (parts.counts) out += "      o.counts[g] = c;\n";
  if (parts.inverse) out += "      table[r] = g;  // a full slot now holds its group\n";
  out += "      g += c != 0;\n    }\n  }\n";
  if (parts.inverse) {
    out += "#pragma omp parallel for schedule(static)\n"
           "  for (int64_t j = 0; j < n; ++j) o.inverse[j] = table[static_cast<uint64_t>(x[j]) - base];\n";
  }
  out += "  return 0;\n}\n";
  return out;
}

/// The entry's checks of one forward() output `index` (and its size tensor `size_index`).
std::string OutputChecks(const UniqueSpec& s, const UniqueParts& parts, size_t index, int size_index) {
  const UniqueOutput what = s.outputs[index];
  std::string out = fmt::format("  {{  // output {}: {}\n    DLTensor& Y = outputs[{}];\n", index,
                                what == UniqueOutput::kValues ? "the distinct values"
                                : what == UniqueOutput::kInverse ? "the inverse" : "the counts",
                                index);
  const bool of_t = what == UniqueOutput::kValues;
  out += of_t && parts.is_float ? "    if (Y.dtype.code != kDLFloat || Y.dtype.bits != 32) return 2;\n"
                                : "    if (Y.dtype.code != kDLInt || Y.dtype.bits != 64) return 2;\n";
  out += fmt::format("    if (Y.ndim != {}) return 2;\n    if (int c = ke_check_layout(Y)) return c;\n",
                     what == UniqueOutput::kInverse ? s.rank : 1);
  if (what == UniqueOutput::kInverse) {
    out += fmt::format("    for (int d = 0; d < {}; ++d) {{\n      if (Y.shape[d] != X.shape[d]) return 3;\n    }}\n",
                       s.rank);
    return out + "    o.inverse = ke_data<int64_t>(Y);\n  }\n";
  }
  const int slot = of_t ? 0 : 1;
  out += of_t ? "    o.values = ke_data<T>(Y);\n" : "    o.counts = ke_data<int64_t>(Y);\n";
  out += fmt::format("    o.length[{}] = Y.shape[0];\n", slot);
  out += fmt::format("    if (sized) {{\n      DLTensor& S = outputs[{}];\n"
                     "      if (S.dtype.code != kDLInt || S.dtype.bits != 64 || S.ndim != 1) return 2;\n"
                     "      if (S.shape[0] != 1) return 3;\n"
                     "      if (int c = ke_check_layout(S)) return c;\n"
                     "      o.size[{}] = ke_data<int64_t>(S);\n    }}\n  }}\n",
                     size_index, slot);
  return out;
}

std::string Entry(const UniqueSpec& s, const UniqueParts& parts, UniqueAlgorithm a) {
  const size_t forward = s.outputs.size();
  size_t bounded = 0;
  for (UniqueOutput o : s.outputs) bounded += o != UniqueOutput::kInverse;
  std::string out = "\nextern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
                    "                                   DLTensor* outputs, int32_t num_outputs) {\n";
  out += fmt::format("  // forward()'s {} outputs; then, when bounded (OUTPUT_BOUNDS), one int64 [1] size\n"
                     "  // tensor per distinct-values or counts output, in output order.\n"
                     "  if (num_inputs < {} || (num_outputs != {} && num_outputs != {})) return 1;\n"
                     "  const bool sized = num_outputs == {};\n",
                     forward, s.num_inputs, forward, forward + bounded, forward + bounded);
  out += fmt::format("  const DLTensor& X = inputs[{}];\n", s.input);
  out += fmt::format("  if (X.dtype.code != {} || X.dtype.bits != {} || X.ndim != {}) return 2;\n",
                     parts.is_float ? "kDLFloat" : "kDLInt", parts.is_float ? 32 : 64, s.rank);
  out += "  if (int c = ke_check_layout(X)) return c;\n"
         "  const int64_t n = ke_numel(X);  // flattened, as torch.unique without dim\n"
         "  const T* x = ke_data<const T>(X);\n"
         "  KeOut o;\n";
  int next_size = static_cast<int>(forward);
  for (size_t i = 0; i < forward; ++i) {
    const bool has_size = s.outputs[i] != UniqueOutput::kInverse;
    out += OutputChecks(s, parts, i, has_size ? next_size : -1);
    if (has_size) ++next_size;
  }
  const char* call = a == UniqueAlgorithm::kRadix      ? "ke_unique_radix"
                     : a == UniqueAlgorithm::kCounting ? "ke_unique_counting"
                                                       : "ke_unique_sort";
  out += "  if (n == 0) return ke_fit(o, 0);\n"
         "  try {\n"
         "    KeScratch scratch;\n"
         "    return " + std::string(call) + "(x, n, o, scratch);\n"
         "  } catch (const std::bad_alloc&) {\n"
         "    return 6;  // scratch memory\n"
         "  }\n}\n";
  return out;
}

}  // namespace

const char* UniqueAlgorithmName(UniqueAlgorithm a) {
  switch (a) {
    case UniqueAlgorithm::kStableSort: return "stable_sort";
    case UniqueAlgorithm::kIntroSort: return "introsort";
    case UniqueAlgorithm::kRadix: return "radix";
    case UniqueAlgorithm::kCounting: return "counting";
  }
  return "?";
}

std::string PrintUniqueCpp(const UniqueSpec& s, const UniqueSchedule& k, const std::string& header) {
  if (s.outputs.empty()) throw core::InternalError("PrintUniqueCpp: no outputs");
  const UniqueParts parts = PartsOf(s, k);
  if (k.algorithm == UniqueAlgorithm::kCounting && parts.is_float) {
    throw core::InternalError("PrintUniqueCpp: counting takes int64 only");
  }
  std::string out = header + templates::GeneratedIncludes() + "#include <atomic>\n#include <new>\n#include <vector>\n";
  if (k.threads_all) out += "\n#include <omp.h>\n";
  out += "\n" + templates::AbiHelpers() + "\n" + ValueHelpers(parts) + "\n";
  std::string body = OutputHelpers(parts) + GroupWriter(parts);
  switch (k.algorithm) {
    case UniqueAlgorithm::kStableSort:
    case UniqueAlgorithm::kIntroSort: body += PrintUniqueSortSource(parts, k.algorithm); break;
    case UniqueAlgorithm::kRadix: body += PrintUniqueRadixSource(parts, k.digit_bits); break;
    case UniqueAlgorithm::kCounting: body += PrintUniqueRadixSource(parts, 8) + CountingUnique(parts); break;
  }
  body += Entry(s, parts, k.algorithm);
  return out + (k.threads_all ? body : StripOmp(body));
}

}  // namespace kernelevolve::operators::codegen

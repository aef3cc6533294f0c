#include "operators/codegen/cpp/unique_order_cpp.h"

#include <fmt/format.h>

namespace kernelevolve::operators::codegen {
namespace {

/// ke_sort_blocks: one block per thread sorted at once, then merged pairwise, each merge
/// split among the threads at co-ranks (merge path); one thread: the sort alone.
std::string BlockSort(const UniqueParts& parts, UniqueAlgorithm a) {
  const std::string sort = a == UniqueAlgorithm::kStableSort ? "std::stable_sort" : "std::sort";
  if (!parts.threads_all) {
    return "\n// Sorts items[0..n) by `less`; returns the buffer holding the result.\n"
           "template <typename Item, typename Less>\n"
           "static Item* ke_sort_blocks(Item* items, Item*, int64_t n, Less less) {\n  " +
           sort + "(items, items + n, less);\n  return items;\n}\n";
  }
  return R"(
// Co-rank of output position d in the stable merge of a[0..na) and c[0..nc): how many of
// a come before it (merge path: Odeh, Green, Mwassi, Shmueli, Birk, IPDPS 2012).
template <typename Item, typename Less>
static int64_t ke_co_rank(const Item* a, int64_t na, const Item* c, int64_t nc, int64_t d, Less less) {
  int64_t lo = std::max<int64_t>(0, d - nc), hi = std::min(d, na);
  while (lo < hi) {
    const int64_t i = lo + (hi - lo) / 2, j = d - i;
    if (j > 0 && i < na && !less(c[j - 1], a[i])) {
      lo = i + 1;
    } else {
      hi = i;
    }
  }
  return lo;
}

// Sorts items[0..n) by `less`: one block per thread, sorted at once, then merged pairwise
// (stable), every merge split among the threads at co-ranks. `spare` holds n items;
// returns the buffer holding the result.
template <typename Item, typename Less>
static Item* ke_sort_blocks(Item* items, Item* spare, int64_t n, Less less) {
  const int nb = ke_blocks();
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < nb; ++b) )" +
         sort + R"((items + ke_edge(n, b, nb), items + ke_edge(n, b + 1, nb), less);
  for (int width = 1; width < nb; width *= 2) {
    for (int b = 0; b < nb; b += 2 * width) {
      const int64_t lo = ke_edge(n, b, nb), mid = ke_edge(n, std::min(b + width, nb), nb);
      const int64_t hi = ke_edge(n, std::min(b + 2 * width, nb), nb);
      const Item* a = items + lo;
      const Item* c = items + mid;
#pragma omp parallel for schedule(static, 1)
      for (int part = 0; part < nb; ++part) {
        const int64_t d0 = ke_edge(hi - lo, part, nb), d1 = ke_edge(hi - lo, part + 1, nb);
        const int64_t i0 = ke_co_rank(a, mid - lo, c, hi - mid, d0, less);
        const int64_t i1 = ke_co_rank(a, mid - lo, c, hi - mid, d1, less);
        std::merge(a + i0, a + i1, c + (d0 - i0), c + (d1 - i1), spare + lo + d0, less);
      }
    }
    std::swap(items, spare);
  }
  return items;
}
)";
}

}  // namespace

std::string PrintUniqueSortSource(const UniqueParts& parts, UniqueAlgorithm a) {
  std::string out = BlockSort(parts, a) +
                    "\nstatic int ke_unique_sort(const T* x, int64_t n, const KeOut& o, KeScratch& scratch) {\n";
  if (!parts.with_pos) {
    // int64 without inverse: equal values are identical, so the values alone are sorted.
    return out + "  T* items = scratch.Take<T>(n);\n  T* spare = scratch.Take<T>(ke_blocks() > 1 ? n : 0);\n"
                 "#pragma omp parallel for schedule(static)\n"
                 "  for (int64_t j = 0; j < n; ++j) items[j] = x[j];\n"
                 "  const T* s = ke_sort_blocks(items, spare, n, [](T a, T b) { return a < b; });\n"
                 "  return ke_write_groups(n, [s](int64_t j) { return s[j]; }, nullptr, o);\n}\n";
  }
  std::string less = "[x](int64_t a, int64_t b) { return ke_before(x[a], x[b]); }";
  if (a == UniqueAlgorithm::kIntroSort && parts.is_float) {
    // Ties (-0.0 / +0.0, NaN) in input order, as the stable sort leaves them.
    less = "[x](int64_t a, int64_t b) { return ke_before(x[a], x[b]) || (!ke_before(x[b], x[a]) && a < b); }";
  }
  return out + "  int64_t* items = scratch.Take<int64_t>(n);\n"
               "  int64_t* spare = scratch.Take<int64_t>(ke_blocks() > 1 ? n : 0);\n"
               "#pragma omp parallel for schedule(static)\n"
               "  for (int64_t j = 0; j < n; ++j) items[j] = j;\n"
               "  const int64_t* pos = ke_sort_blocks(items, spare, n,\n      " +
         less + ");\n  return ke_write_groups(n, [x, pos](int64_t j) { return x[pos[j]]; }, pos, o);\n}\n";
}

std::string PrintUniqueRadixSource(const UniqueParts& parts, int digit_bits) {
  const std::string pos_params = parts.with_pos ? ", int64_t*& pos, int64_t*& spare_pos" : "";
  std::string out = fmt::format(R"(
constexpr int kBits = {};
constexpr int kDigits = 1 << kBits;
constexpr int kPasses = (8 * static_cast<int>(sizeof(Key)) + kBits - 1) / kBits;

static inline int ke_digit(Key k, int pass) {{ return static_cast<int>((k >> (pass * kBits)) & (kDigits - 1)); }}
)", digit_bits);
  out += "\n// LSD radix sort of keys[0..n)" + std::string(parts.with_pos ? " and their positions" : "") +
         ", stable. Only the passes whose\n"
         "// digit differs between keys run (ids below 2^16: 2 of 8 at 8 bits); one sweep counts\n"
         "// their digits per block, a later pass counts its blocks again (the keys moved). On\n"
         "// return keys point at the sorted data.\n"
         "static void ke_radix_sort(Key*& keys, Key*& spare" + pos_params +
         ", int64_t n,\n                          KeScratch& scratch) {\n";
  out += R"(  const int nb = ke_blocks();
  const Key k0 = keys[0];
  Key differ = 0;  // the bits in which some key differs from the first
#pragma omp parallel for schedule(static) reduction(| : differ)
  for (int64_t j = 0; j < n; ++j) differ |= keys[j] ^ k0;
  int passes[kPasses];
  int np = 0;
  for (int p = 0; p < kPasses; ++p) {
    if (ke_digit(differ, p) != 0) passes[np++] = p;
  }
  if (np == 0) return;
  int64_t* hist = scratch.Take<int64_t>(static_cast<int64_t>(nb) * np * kDigits);  // [block][pass][digit]
  int64_t* offset = scratch.Take<int64_t>(static_cast<int64_t>(nb) * kDigits);
  auto at = [hist, np](int b, int q) { return hist + (static_cast<size_t>(b) * np + q) * kDigits; };
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < nb; ++b) {
    std::fill(at(b, 0), at(b, 0) + np * kDigits, 0);
    for (int64_t j = ke_edge(n, b, nb); j < ke_edge(n, b + 1, nb); ++j) {
      const Key k = keys[j];
      for (int q = 0; q < np; ++q) ++at(b, q)[ke_digit(k, passes[q])];
    }
  }
  for (int q = 0; q < np; ++q) {
    const int p = passes[q];
    if (q > 0 && nb > 1) {
#pragma omp parallel for schedule(static, 1)
      for (int b = 0; b < nb; ++b) {
        int64_t* h = at(b, q);
        std::fill(h, h + kDigits, 0);
        for (int64_t j = ke_edge(n, b, nb); j < ke_edge(n, b + 1, nb); ++j) ++h[ke_digit(keys[j], p)];
      }
    }
    int64_t next = 0;
    for (int d = 0; d < kDigits; ++d) {
      for (int b = 0; b < nb; ++b) {
        offset[static_cast<size_t>(b) * kDigits + d] = next;
        next += at(b, q)[d];
      }
    }
#pragma omp parallel for schedule(static, 1)
    for (int b = 0; b < nb; ++b) {
      int64_t* off = &offset[static_cast<size_t>(b) * kDigits];
      for (int64_t j = ke_edge(n, b, nb); j < ke_edge(n, b + 1, nb); ++j) {
        const int64_t to = off[ke_digit(keys[j], p)]++;
        spare[to] = keys[j];
)";
  if (parts.with_pos) out += "        spare_pos[to] = pos[j];\n";
  out += "      }\n    }\n    std::swap(keys, spare);\n";
  if (parts.with_pos) out += "    std::swap(pos, spare_pos);\n";
  out += "  }\n}\n";
  out += "\nstatic int ke_unique_radix(const T* x, int64_t n, const KeOut& o, KeScratch& scratch) {\n"
         "  Key* keys = scratch.Take<Key>(n);\n  Key* spare = scratch.Take<Key>(n);\n";
  if (parts.with_pos) {
    out += "  int64_t* pos = scratch.Take<int64_t>(n);\n  int64_t* spare_pos = scratch.Take<int64_t>(n);\n";
  }
  out += "#pragma omp parallel for schedule(static)\n  for (int64_t j = 0; j < n; ++j) {\n"
         "    keys[j] = ke_key(x[j]);\n";
  if (parts.with_pos) out += "    pos[j] = j;\n";
  out += "  }\n";
  out += parts.with_pos ? "  ke_radix_sort(keys, spare, pos, spare_pos, n, scratch);\n"
                        : "  ke_radix_sort(keys, spare, n, scratch);\n";
  if (parts.is_float) {
    // Keys merge -0.0 with +0.0 and every NaN: the values come from x.
    out += "  return ke_write_groups(n, [x, pos](int64_t j) { return x[pos[j]]; }, pos, o);\n}\n";
  } else {
    out += fmt::format("  return ke_write_groups(n, [keys](int64_t j) {{ return ke_value(keys[j]); }}, {}, o);\n}}\n",
                       parts.with_pos ? "pos" : "nullptr");
  }
  return out;
}

}  // namespace kernelevolve::operators::codegen

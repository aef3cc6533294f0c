#include "operators/codegen/cpp/register_transpose.h"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

namespace kernelevolve::operators::codegen {

std::string RegisterTransposeCpp(int lanes) {
  if (lanes < 1 || lanes > 64 || (lanes & (lanes - 1)) != 0) {
    throw std::invalid_argument(fmt::format("RegisterTransposeCpp: {} lanes (a power of two up to 64)", lanes));
  }
  std::string masks, rounds;
  for (int b = lanes / 2; b >= 1; b /= 2) {
    // Indices into the pair (a, c): 0..lanes-1 pick from a, lanes.. from c. Row r keeps
    // its columns with bit b clear and takes row r + b's columns with bit b clear in the
    // others; row r + b takes row r's columns with bit b set, then keeps its own.
    std::vector<int> lo, hi;
    for (int col = 0; col < lanes; ++col) {
      lo.push_back((col & b) == 0 ? col : lanes + col - b);
      hi.push_back((col & b) == 0 ? col + b : lanes + col);
    }
    masks += fmt::format("  const ke_ti lo{0} = {{{1}}}, hi{0} = {{{2}}};\n", b, fmt::join(lo, ", "), fmt::join(hi, ", "));
    rounds += fmt::format(
        "#pragma GCC unroll 16\n"
        "  for (int r = 0; r < {1}; ++r) {{\n"
        "    if (r & {0}) continue;\n"
        "    const ke_tf a = x[r], c = x[r + {0}];\n"
        "    x[r] = __builtin_shuffle(a, c, lo{0});\n"
        "    x[r + {0}] = __builtin_shuffle(a, c, hi{0});\n"
        "  }}\n",
        b, lanes);
  }
  return fmt::format(
      "#ifndef KE_TRANSPOSE_LANES\n"
      "#define KE_TRANSPOSE_LANES {0}\n"
      "// A {0} x {0} tile of floats transposed in registers (x[r][c] becomes x[c][r]):\n"
      "// log2({0}) rounds of two-input shuffles, round b exchanging the off-diagonal b x b\n"
      "// blocks of rows r and r + b, which swaps bit b of each element's row and column.\n"
      "typedef float ke_tf __attribute__((vector_size({0} * sizeof(float)), aligned(sizeof(float)), may_alias));\n"
      "typedef int32_t ke_ti __attribute__((vector_size({0} * sizeof(int32_t))));\n"
      "static inline __attribute__((always_inline)) void ke_transpose_regs(ke_tf (&x)[{0}]) {{\n"
      "{1}{2}"
      "}}\n"
      "#endif\n",
      lanes, masks, rounds);
}

}  // namespace kernelevolve::operators::codegen

#include "operators/codegen/triton/sort_triton.h"

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::operators::codegen {
namespace {

// Keys: s, the float's bits as a signed int32, is its order for s >= 0 (positive
// floats); a negative float's order reverses with its magnitude s + 2^31, so its key is
// -(s + 2^31). NaN takes the bits of the positive quiet NaN, above +inf (torch's order).
// Descending: -1 - key. The key shifted by 32 plus the position sorts by (key, position).
constexpr const char* kSortKernel = R"PY(

@triton.jit
def _ke_sort_rows(x, values, indices, length, inner, K, P2: tl.constexpr, DESCENDING: tl.constexpr,
                  HAS_VALUES: tl.constexpr, HAS_INDICES: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    o = row // inner
    i = row % inner
    j = tl.arange(0, P2).to(tl.int64)
    m = j < length
    base = o * length * inner + i
    v = tl.load(x + base + j * inner, mask=m, other=0.0)
    s = v.to(tl.int32, bitcast=True).to(tl.int64)
    s = tl.where(v == 0.0, 0, s)
    s = tl.where(v != v, 2143289344, s)
    key = tl.where(s >= 0, s, -s - 2147483647 - 1)
    if DESCENDING:
        key = -1 - key
    packed = tl.where(m, (key << 32) + j, 9223372036854775807)
    packed = tl.sort(packed)
    idx = packed - ((packed >> 32) << 32)
    keep = j < K
    out = o * K * inner + j * inner + i
    if HAS_INDICES:
        tl.store(indices + out, idx, mask=keep)
    if HAS_VALUES:
        tl.store(values + out, tl.load(x + base + idx * inner, mask=keep), mask=keep)
)PY";

}  // namespace

std::string PrintSortTriton(const ir::SortSpec& s, const SortTritonSchedule& k, const std::string& header) {
  if (s.dtype != core::DType::kFloat32) throw core::InternalError("PrintSortTriton: the packed keys need float32");
  int values = -1, indices = -1;
  for (size_t i = 0; i < s.outputs.size(); ++i) (s.outputs[i] == 0 ? values : indices) = static_cast<int>(i);
  const bool topk = s.k >= 0;
  std::string out = header + "import torch\nimport triton\nimport triton.language as tl\n" + kSortKernel;
  out += fmt::format(R"PY(

def kernelevolve_entry(inputs, outputs):
    if len(inputs) < {num_inputs} or len(outputs) != {nout}:
        raise ValueError(f"{{len(inputs)}} inputs and {{len(outputs)}} outputs; this kernel takes {num_inputs} and {nout}")
    x = inputs[{input}]
    if x.dtype != torch.float32 or x.dim() != {rank}:
        raise ValueError(f"x is {{x.dtype}} of rank {{x.dim()}}; this kernel takes float32 of rank {rank}")
    length = x.shape[{dim}]
    outer = 1
    for d in x.shape[:{dim}]:
        outer *= d
    inner = 1
    for d in x.shape[{dim} + 1:]:
        inner *= d
    k = {k}
    if k > length:
        raise ValueError(f"k = {{k}} exceeds the {{length}} elements of dim {dim}")
    if length > {max_row}:
        raise ValueError(f"rows of {{length}} elements; this kernel sorts at most {max_row} a program")
    shape = list(x.shape)
    shape[{dim}] = k
    for i, t in enumerate(outputs):
        want = torch.int64 if i == {indices} else torch.float32
        if t.dtype != want or list(t.shape) != shape:
            raise ValueError(f"output {{i}} is {{t.dtype}} {{tuple(t.shape)}}; expected {{want}} {{tuple(shape)}}")
    rows = outer * inner
    if rows == 0 or k == 0:
        return
    _ke_sort_rows[(rows,)](x, {values_arg}, {indices_arg}, length, inner, k, P2=triton.next_power_of_2(length),
                           DESCENDING={descending}, HAS_VALUES={has_values}, HAS_INDICES={has_indices},
                           num_warps={warps})
)PY",
                     fmt::arg("num_inputs", s.num_inputs), fmt::arg("nout", s.outputs.size()),
                     fmt::arg("input", s.input), fmt::arg("rank", s.rank), fmt::arg("dim", s.dim),
                     fmt::arg("k", topk ? fmt::format("{}", s.k) : "length"), fmt::arg("max_row", kTritonSortMaxRow),
                     fmt::arg("indices", indices), fmt::arg("values_arg", values >= 0 ? fmt::format("outputs[{}]", values) : "x"),
                     fmt::arg("indices_arg", indices >= 0 ? fmt::format("outputs[{}]", indices) : "x"),
                     fmt::arg("descending", s.descending ? "True" : "False"),
                     fmt::arg("has_values", values >= 0 ? "True" : "False"),
                     fmt::arg("has_indices", indices >= 0 ? "True" : "False"), fmt::arg("warps", k.num_warps));
  return out;
}

}  // namespace kernelevolve::operators::codegen

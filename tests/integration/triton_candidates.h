// Triton candidate sources and a fixed-list operator shared by the Triton platform
// tests (tests/integration/triton_interpret_test.cpp under TRITON_INTERPRET=1,
// tests/gpu/triton_gpu_test.cpp on a GPU). All compute ReLU over the float32 fixtures
// of tests/unit/relu_fixtures.h.
#pragma once

#include <string>

#include "fixed_operator.h"

namespace kernelevolve::triton_test {

/// A correct Triton ReLU: one program per 1024 elements. `load_offset_suffix` is
/// appended to the load's offset `offs` (" * 100000000": an illegal address).
inline std::string ReluSource(const std::string& load_offset_suffix = "") {
  return R"(import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs)" + load_offset_suffix + R"(, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.where(x < 0.0, 0.0, x), mask=mask)


def kernelevolve_entry(inputs, outputs):
    n = outputs[0].numel()
    _relu[(triton.cdiv(n, 1024),)](inputs[0], outputs[0], n, BLOCK=1024)
)";
}

/// A launcher that raises (runtime_error; the runner stays).
inline std::string RaisingSource() {
  return "def kernelevolve_entry(inputs, outputs):\n    raise ValueError('boom from the candidate')\n";
}

/// A launcher that never returns (timeout; the runner is killed and replaced).
inline std::string HangingSource() {
  return "import time\n\n\ndef kernelevolve_entry(inputs, outputs):\n    while True:\n        time.sleep(0.05)\n";
}

/// A launcher that copies its input (incorrect: negative elements kept).
inline std::string WrongSource() { return "def kernelevolve_entry(inputs, outputs):\n    outputs[0].copy_(inputs[0])\n"; }

// The fixed-list operator and Named() of fixed_operator.h, where these tests name them.
using testing_util::FixedOperator;
using testing_util::Named;

}  // namespace kernelevolve::triton_test

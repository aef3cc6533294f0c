// The one entry point every native CPU candidate exports (design.md, "Candidate ABI").
//
//   extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,
//                                      DLTensor* outputs, int32_t num_outputs);
//
// inputs:  forward() arguments in get_inputs() order, then module parameters in
//          state_dict() order; dense row-major (strides == NULL), device kDLCPU.
// outputs: buffers allocated by the caller with the reference's shapes and dtypes;
//          the kernel writes every element. Returns 0 on success, non-zero on error.
// Threads: the kernel may use OpenMP; OMP_NUM_THREADS is set by the runner.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>

namespace kernelevolve::platforms::cpu {

inline constexpr const char* kEntrySymbol = "kernelevolve_entry";
using EntryFn = int (*)(const DLTensor* inputs, int32_t num_inputs, DLTensor* outputs,
                        int32_t num_outputs);

}  // namespace kernelevolve::platforms::cpu

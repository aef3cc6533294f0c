// C++ spelling of the loop IR's reductions, shared by the CPU rowwise template and the
// CUDA reduction template: the identity of each reduction and the accumulator update.
#pragma once

#include <string>

#include "operators/ir/loop_ir.h"

namespace kernelevolve::operators::templates {

/// The identity an accumulator starts from: "0" (sum), "1" (prod), "-INFINITY" (max),
/// "INFINITY" (min).
std::string CppReduceInit(ir::ReduceKind kind);

/// The statement folding `value` into accumulator `acc`, e.g. "a += v;" or
/// "a = v > a ? v : a;" (max and min by comparison: a NaN value is skipped, as in the
/// CPU rowwise kernels).
std::string CppReduceUpdate(ir::ReduceKind kind, const std::string& acc, const std::string& value);

}  // namespace kernelevolve::operators::templates

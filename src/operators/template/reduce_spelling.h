// Spellings of the loop IR's reductions (ir::ReduceKind), one row per kind with a column
// per use: the identity an accumulator starts from, the update statement, the OpenMP
// reduction clause of the CPU rowwise loops and the combine functor of the CUDA
// reduction template's block reduction (issue 17: one table, not a switch per emitter).
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

/// The C++ type of a reduction's accumulator: "double" for a sum or product when
/// `double_accumulator` (the "accumulator" knob), else "float".
std::string CppAccumulatorType(ir::ReduceKind kind, bool double_accumulator);

/// The OpenMP reduction identifier of `kind` ("+", "*", "max", "min"; the `reduction`
/// clause of the OpenMP API specification).
std::string OmpReductionIdentifier(ir::ReduceKind kind);

/// The combine functor of cuda_reduction's block reduction ("KeSum", "KeProd",
/// "KeMax", "KeMin", defined in the generated prelude).
std::string CudaReduceFunctor(ir::ReduceKind kind);

}  // namespace kernelevolve::operators::templates

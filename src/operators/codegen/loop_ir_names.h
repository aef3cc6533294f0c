// The loop IR's names that the two loop-nest printers (cpp/loop_nest_cpp.cpp,
// triton/loop_nest_triton.cpp) spell unqualified: each says
// `using namespace loop_ir_names;` inside its own anonymous namespace.
#pragma once

#include "core/dtype.h"
#include "operators/ir/expr.h"
#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::codegen::loop_ir_names {

using core::DType;
using ir::DefKind;
using ir::Expr;
using ir::ExprKind;
using ir::ExprNode;
using ir::ReduceOp;
using ir::ScanOp;
using ir::TensorDef;

}  // namespace kernelevolve::operators::codegen::loop_ir_names

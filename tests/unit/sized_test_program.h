// A small program as a lowering of size `n` would give it, for the tests of sizes read
// at run time (ir::Generalize; the C++ and Triton loop-nest printers).
#pragma once

#include <cstdint>

#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::ir {

/// x float32 [n, 4], lengths int64 [n] -> y [n, 4] = where(i0 < n - 1, x * 2, 0) +
/// lengths[i0] (n - 1 as the graph would bake `x.shape[0] - 1`), and the row sums
/// z [n] = sum over i1 of x (a reduction), as a lowering of size `n` would give them.
inline TensorProgram SizedProgram(int64_t n, double scale = 2.0, int64_t extra = 0) {
  TensorProgram p;
  p.num_inputs = 2;
  TensorDef x;
  x.id = 0;
  x.kind = DefKind::kInput;
  x.abi_index = 0;
  x.shape = {n, 4};
  TensorDef len;
  len.id = 1;
  len.kind = DefKind::kInput;
  len.abi_index = 1;
  len.dtype = core::DType::kInt64;
  len.shape = {n};
  TensorDef y;
  y.id = 2;
  y.shape = {n, 4};
  const Expr value = Op(Prim::kMul, {Load(0, core::DType::kFloat32, {Var(0), Var(1)}), Float(scale)});
  const Expr keep = Op(Prim::kLt, {Var(0), Int(n - 1 + extra)});
  y.body = Op(Prim::kAdd, {Op(Prim::kWhere, {keep, value, Float(0)}),
                           Cast(Load(1, core::DType::kInt64, {Var(0)}), core::DType::kFloat32)});
  TensorDef z;
  z.id = 3;
  z.kind = DefKind::kReduce;
  z.shape = {n};
  z.reduce_extents = {4};
  z.body = Load(0, core::DType::kFloat32, {Var(0), Var(1)});
  p.defs = {x, len, y, z};
  p.outputs = {2, 3};
  return p;
}

}  // namespace kernelevolve::operators::ir

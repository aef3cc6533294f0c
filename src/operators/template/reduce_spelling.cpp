#include "operators/template/reduce_spelling.h"

#include <fmt/format.h>

namespace kernelevolve::operators::templates {
namespace {

struct Spelling {
  const char* init;
  const char* omp;
  const char* cuda_functor;
};

const Spelling& Of(ir::ReduceKind kind) {
  static const Spelling kSum{"0", "+", "KeSum"}, kProd{"1", "*", "KeProd"}, kMax{"-INFINITY", "max", "KeMax"},
      kMin{"INFINITY", "min", "KeMin"};
  switch (kind) {
    case ir::ReduceKind::kSum: return kSum;
    case ir::ReduceKind::kProd: return kProd;
    case ir::ReduceKind::kMax: return kMax;
    case ir::ReduceKind::kMin: return kMin;
  }
  return kSum;
}

}  // namespace

std::string CppReduceInit(ir::ReduceKind kind) { return Of(kind).init; }

std::string CppReduceUpdate(ir::ReduceKind kind, const std::string& acc, const std::string& value) {
  switch (kind) {
    case ir::ReduceKind::kSum: return acc + " += " + value + ";";
    case ir::ReduceKind::kProd: return acc + " *= " + value + ";";
    case ir::ReduceKind::kMax: return fmt::format("{0} = {1} > {0} ? {1} : {0};", acc, value);
    case ir::ReduceKind::kMin: return fmt::format("{0} = {1} < {0} ? {1} : {0};", acc, value);
  }
  return "";
}

std::string CppAccumulatorType(ir::ReduceKind kind, bool double_accumulator) {
  return (kind == ir::ReduceKind::kSum || kind == ir::ReduceKind::kProd) && double_accumulator ? "double" : "float";
}

std::string OmpReductionIdentifier(ir::ReduceKind kind) { return Of(kind).omp; }

std::string CudaReduceFunctor(ir::ReduceKind kind) { return Of(kind).cuda_functor; }

}  // namespace kernelevolve::operators::templates

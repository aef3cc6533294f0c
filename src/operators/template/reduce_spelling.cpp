#include "operators/template/reduce_spelling.h"

#include <fmt/format.h>

namespace kernelevolve::operators::templates {

std::string CppReduceInit(ir::ReduceKind kind) {
  switch (kind) {
    case ir::ReduceKind::kSum: return "0";
    case ir::ReduceKind::kProd: return "1";
    case ir::ReduceKind::kMax: return "-INFINITY";
    case ir::ReduceKind::kMin: return "INFINITY";
  }
  return "0";
}

std::string CppReduceUpdate(ir::ReduceKind kind, const std::string& acc, const std::string& value) {
  switch (kind) {
    case ir::ReduceKind::kSum: return acc + " += " + value + ";";
    case ir::ReduceKind::kProd: return acc + " *= " + value + ";";
    case ir::ReduceKind::kMax: return fmt::format("{0} = {1} > {0} ? {1} : {0};", acc, value);
    case ir::ReduceKind::kMin: return fmt::format("{0} = {1} < {0} ? {1} : {0};", acc, value);
  }
  return "";
}

}  // namespace kernelevolve::operators::templates

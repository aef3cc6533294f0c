#include "core/status.h"

#include <array>
#include <string>
#include <utility>

#include "core/error.h"

namespace kernelevolve::core {
namespace {
constexpr std::array<std::pair<Status, std::string_view>, 9> kNames = {{
    {Status::kOk, "ok"},
    {Status::kCompileError, "compile_error"},
    {Status::kRuntimeError, "runtime_error"},
    {Status::kTimeout, "timeout"},
    {Status::kCrash, "crash"},
    {Status::kOutOfMemory, "out_of_memory"},
    {Status::kIncorrect, "incorrect"},
    {Status::kRejectedByCheck, "rejected_by_check"},
    {Status::kWorkerLost, "worker_lost"},
}};
}  // namespace

std::string_view StatusName(Status status) {
  for (const auto& [value, name] : kNames) {
    if (value == status) return name;
  }
  throw InternalError("unknown Status value");
}

Status StatusFromName(std::string_view name) {
  for (const auto& [value, text] : kNames) {
    if (text == name) return value;
  }
  throw InvalidInputError("unknown status '" + std::string(name) + "'");
}

}  // namespace kernelevolve::core

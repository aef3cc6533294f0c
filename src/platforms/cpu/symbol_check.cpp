#include "platforms/cpu/symbol_check.h"

#include <cxxabi.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>

#include "eval/sandbox.h"

namespace kernelevolve::platforms::cpu {
namespace {

// Version prefixes of the libraries a candidate links against implicitly (libc, libm,
// libstdc++, libgcc_s, libgomp with -fopenmp).
constexpr const char* kAllowedVersions[] = {"GLIBC_", "GLIBCXX_", "CXXABI_", "GCC_", "GOMP_", "OMP_"};

const std::set<std::string>& UnversionedHooks() {
  static const std::set<std::string> hooks = {"__gmon_start__", "_ITM_registerTMCloneTable",
                                              "_ITM_deregisterTMCloneTable", "__cxa_finalize"};
  return hooks;
}

const std::set<std::string>& DeniedCalls() {
  static const std::set<std::string> denied = {
      "dlopen",  "dlmopen", "dlsym",   "dlvsym",  "system",  "popen",       "fork",        "vfork",
      "clone",   "execve",  "execv",   "execvp",  "execvpe", "execl",       "execlp",      "execle",
      "fexecve", "posix_spawn", "posix_spawnp", "socket",  "connect", "syscall", "ptrace"};
  return denied;
}

std::string Demangle(const std::string& name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string result = status == 0 && text ? text : name;
  std::free(text);
  return result;
}

/// True when `name@version` may be linked.
bool Allowed(const std::string& name, const std::string& version) {
  if (version.empty()) return UnversionedHooks().contains(name);
  if (DeniedCalls().contains(name)) return false;
  for (const char* prefix : kAllowedVersions) {
    if (version.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> CheckUndefinedSymbols(const std::string& nm_output) {
  std::istringstream in(nm_output);
  std::string line;
  std::vector<std::string> offenders;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string type, symbol;
    if (!(fields >> type >> symbol)) continue;
    if (type != "U" && type != "w" && type != "v") continue;
    std::string name = symbol, version;
    if (auto at = symbol.find('@'); at != std::string::npos) {
      name = symbol.substr(0, at);
      version = symbol.substr(symbol.find_first_not_of('@', at));
    }
    if (!Allowed(name, version)) offenders.push_back(Demangle(name));
  }
  if (offenders.empty()) return std::nullopt;
  std::string message = "links to a forbidden symbol: " + offenders.front();
  if (offenders.size() > 1) message += " (and " + std::to_string(offenders.size() - 1) + " more)";
  return message + "; candidates may use only the C/C++ runtime and OpenMP";
}

std::optional<std::string> CheckSharedObjectSymbols(const std::filesystem::path& shared_object) {
  eval::SandboxLimits limits;
  limits.wall_timeout_seconds = 30;
  limits.isolate_network = false;  // nm needs nothing; skip the namespace setup
  auto result = eval::RunSandboxed({"/usr/bin/nm", "-D", "--undefined-only", shared_object.string()},
                                   {{"PATH", "/usr/bin:/bin"}, {"LC_ALL", "C"}}, "/", limits);
  if (result.timed_out || result.signal != 0 || result.exit_code != 0) {
    return "cannot list the symbols of " + shared_object.string() + " with nm (exit " +
           std::to_string(result.exit_code) + "): " + result.stderr_text.substr(0, 300);
  }
  return CheckUndefinedSymbols(result.stdout_text);
}

}  // namespace kernelevolve::platforms::cpu

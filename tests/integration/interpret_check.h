// Runs a Python checker of generated Triton modules under TRITON_INTERPRET=1 (no GPU)
// and turns its JSON lines into test expectations: shared by the Triton interpreter
// tests (triton_loop_nest_interpret_test.cpp, triton_runtime_sizes_test.cpp) whose
// checkers (tests/integration/*_check.py) print one {"module", "ok", "error"} line per
// module of the manifest and exit 0 when all pass.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "problem/worker_client.h"

namespace kernelevolve::testing_util {

/// Writes `manifest` to `dir`/manifest.json, runs tests/integration/`script` on it with
/// the default worker Python under kInterpretWithoutGpuEnv, and expects every module
/// to pass, every module to be reported and the checker to exit 0.
inline void RunInterpretChecker(const std::string& script, const std::filesystem::path& dir,
                                const nlohmann::json& manifest) {
  std::ofstream(dir / "manifest.json") << manifest.dump(1);
  const std::string cmd = fmt::format("{} '{}' '{}/integration/{}' '{}' > '{}' 2>&1", kInterpretWithoutGpuEnv,
                                      problem::DefaultPython().string(), KE_TEST_DATA_DIR, script,
                                      (dir / "manifest.json").string(), (dir / "results.txt").string());
  const int status = std::system(cmd.c_str());
  std::istringstream results(ReadFile(dir / "results.txt"));
  size_t checked = 0;
  for (std::string line; std::getline(results, line);) {
    if (line.empty() || line[0] != '{') continue;
    const auto r = nlohmann::json::parse(line);
    ++checked;
    EXPECT_TRUE(r.at("ok").get<bool>()) << r.at("module").get<std::string>() << ": "
                                         << r.at("error").get<std::string>() << "\n"
                                         << ReadFile(r.at("module").get<std::string>());
  }
  EXPECT_EQ(checked, manifest.size()) << ReadFile(dir / "results.txt");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace kernelevolve::testing_util

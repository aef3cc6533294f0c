// `--config FILE.toml` end to end (issue 20): a value from the file reaches the run, a
// flag on the command line wins over it, and a bad file (unknown key or section, bad
// value, missing file) is refused with exit 2 naming the file and the key, for
// optimize, bench, compare and eval alike; config/example.toml is accepted.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

using testing_util::ReadFile;

class ConfigCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing_util::FreshTestDir("ke_config"); }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// Writes `text` to dir_/NAME and returns its path.
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  /// Runs `kernelevolve ARGS` from the source tree; stdout and stderr in log_.
  int Run(const std::string& args) {
    const std::string cmd = fmt::format("cd '{}' && '{}' {} >'{}' 2>&1", KE_SOURCE_DIR, KE_BINARY_PATH, args,
                                        (dir_ / "log.txt").string());
    const int status = std::system(cmd.c_str());
    log_ = ReadFile(dir_ / "log.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path dir_;
  std::string log_;
};

TEST_F(ConfigCliTest, FileValuesReachTheRunAndFlagsWin) {
  const std::string config = Write("run.toml", fmt::format(R"([optimize]
budget = 3                              # overridden by --budget 1 below
set = ["batch_size=16", "dim=1024"]     # applied: result.json's overrides
threads = 1
seeds = 1
min-time = 0.02
max-time = 0.2
confirm-rounds = 0
cache-dir = "{}"
no-kb = true
quiet = true
)", (dir_ / "cache").string()));
  const fs::path out = dir_ / "run";
  ASSERT_EQ(Run(fmt::format("optimize problems/level1/relu.py --config '{}' --budget 1 --out '{}'", config,
                            out.string())),
            0)
      << log_;
  const auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_EQ(doc["evaluations"], 1) << "the flag wins over the file's budget = 3";
  EXPECT_EQ(doc["overrides"], (nlohmann::json{{"batch_size", "16"}, {"dim", "1024"}}));
  EXPECT_EQ(doc["machine"]["threads"], 1);
  EXPECT_TRUE(fs::is_directory(dir_ / "cache" / "cpu")) << "cache-dir from the file";
  EXPECT_FALSE(doc.contains("warm_start") && doc["warm_start"]["enabled"].get<bool>()) << "no-kb from the file";
}

TEST_F(ConfigCliTest, BadFilesExitTwoNamingTheFileAndTheKey) {
  const struct {
    std::string command;  // the file's path is appended as --config
    std::string text;
    std::string expected;  // in the error line, after the file's path
  } cases[] = {
      {"optimize problems/level1/relu.py", "[optimize]\nbudgett = 3\n",
       ": [optimize] budgett: unknown key (did you mean 'budget'?)"},
      {"optimize problems/level1/relu.py", "[optimize]\nbudget = \"many\"\n", ": [optimize] budget = many: "},
      {"optimize problems/level1/relu.py", "[optimize]\nthreads = 1\nseeds = 1\nthreads = 2\n", ": [optimize] threads: given twice"},
      {"optimize problems/level1/relu.py", "[optimze]\nbudget = 3\n",
       ": unknown section [optimze] (did you mean 'optimize'?)"},
      {"optimize problems/level1/relu.py", "budget = 3\n", ": key 'budget' is outside a section"},
      {"optimize problems/level1/relu.py", "[optimize]\nproblem = \"x.py\"\n", ": [optimize] problem: a positional argument"},
      // A typo in another command's section is caught too: one file serves every command.
      {"optimize problems/level1/relu.py", "[bench]\nsizez = \"s.json\"\n",
       ": [bench] sizez: unknown key (did you mean 'sizes'?)"},
      {"bench problems/level1", "[bench]\nbudget = -\n", ": [bench] budget = -: "},
      {"compare --problems problems/level1/relu.py", "[compare]\npolices = \"ucb1\"\n",
       ": [compare] polices: unknown key (did you mean 'policies'?)"},
      {"eval problems/level1/relu.py tests/data/kernels/relu.cpp", "[eval]\nomp-wait-policy = \"lazy\"\n",
       ": [eval] omp-wait-policy = lazy: "},
  };
  for (const auto& c : cases) {
    const std::string file = Write("bad.toml", c.text);
    EXPECT_EQ(Run(fmt::format("{} --config '{}' --out '{}'", c.command, file, (dir_ / "out").string())), 2)
        << c.text << log_;
    EXPECT_NE(log_.find("error: " + file + c.expected), std::string::npos) << c.text << log_;
    EXPECT_EQ(log_.find('\n'), log_.size() - 1) << "one line: " << log_;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << "refused before any work";
  }
  const std::string missing = (dir_ / "missing.toml").string();
  EXPECT_EQ(Run(fmt::format("optimize problems/level1/relu.py --config '{}'", missing)), 2) << log_;
  EXPECT_NE(log_.find("error: " + missing + ": no such config file"), std::string::npos) << log_;
}

TEST_F(ConfigCliTest, FileValuesReachBenchCompareAndEval) {
  // Each command reads its own section: a value that command then refuses proves it arrived.
  const std::string config = Write("all.toml", fmt::format(R"([bench]
sizes = "{0}/no_sizes.json"
[compare]
policies = ["greedy", "nosuchpolicy"]
[eval]
seeds = 0
)", dir_.string()));
  EXPECT_EQ(Run(fmt::format("bench problems/level1 --config '{}' --out '{}/b'", config, dir_.string())), 2) << log_;
  EXPECT_NE(log_.find("no_sizes.json"), std::string::npos) << log_;
  EXPECT_EQ(Run(fmt::format("compare --problems problems/level1/relu.py --config '{}' --out '{}/c'", config,
                            dir_.string())),
            2)
      << log_;
  EXPECT_NE(log_.find("nosuchpolicy"), std::string::npos) << log_;
  EXPECT_EQ(Run(fmt::format("eval problems/level1/relu.py tests/data/kernels/relu.cpp --config '{}' --out '{}/e'",
                            config, dir_.string())),
            2)
      << log_;
  EXPECT_NE(log_.find("--seeds must be at least 1"), std::string::npos) << log_;
}

TEST_F(ConfigCliTest, TheExampleIsAcceptedByEveryCommand) {
  // Every section and key of config/example.toml is known and every value valid: the
  // commands get past the file and stop at the missing problem, suite or kernel.
  const std::string missing = (dir_ / "missing").string();
  for (const std::string command :
       {"optimize " + missing + ".py", "bench " + missing, "compare --problems " + missing + ".py",
        "eval " + missing + ".py tests/data/kernels/relu.cpp"}) {
    EXPECT_EQ(Run(fmt::format("{} --config config/example.toml --out '{}/out'", command, dir_.string())), 2)
        << command << "\n" << log_;
    EXPECT_NE(log_.find(missing), std::string::npos) << command << "\n" << log_;
    EXPECT_EQ(log_.find("example.toml"), std::string::npos) << command << "\n" << log_;
  }
}

}  // namespace
}  // namespace kernelevolve

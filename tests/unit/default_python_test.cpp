// DefaultPython(): which interpreter the worker is started with.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "problem/worker_client.h"

namespace kernelevolve::problem {
namespace {

/// Sets KERNELEVOLVE_PYTHON for one test and restores the previous value.
class PythonEnv {
 public:
  explicit PythonEnv(const char* value) {
    if (const char* old = std::getenv("KERNELEVOLVE_PYTHON")) old_ = old;
    ::setenv("KERNELEVOLVE_PYTHON", value, 1);
  }
  ~PythonEnv() {
    if (old_) {
      ::setenv("KERNELEVOLVE_PYTHON", old_->c_str(), 1);
    } else {
      ::unsetenv("KERNELEVOLVE_PYTHON");
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(DefaultPython, ABareNameIsLookedUpOnPath) {
  PythonEnv env("sh");  // every POSIX system has sh on PATH
  const std::filesystem::path found = DefaultPython();
  EXPECT_TRUE(found.is_absolute()) << found;
  EXPECT_EQ(found.filename(), "sh");
  EXPECT_EQ(::access(found.c_str(), X_OK), 0) << found;
}

TEST(DefaultPython, APathIsKeptAsGiven) {
  PythonEnv env("/opt/nowhere/python3");
  EXPECT_EQ(DefaultPython(), "/opt/nowhere/python3");
}

TEST(DefaultPython, AnUnknownBareNameStaysAsIsForTheNotFoundError) {
  PythonEnv env("no-such-python-kernelevolve");
  EXPECT_EQ(DefaultPython(), "no-such-python-kernelevolve");
}

}  // namespace
}  // namespace kernelevolve::problem

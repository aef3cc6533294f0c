// SweepStaleTemporaries (platforms/native_build.h): what a killed build left in the
// kernel cache goes; files of live processes and recent files stay.
#include "platforms/native_build.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>

namespace kernelevolve::platforms {
namespace {

namespace fs = std::filesystem;

/// The pid of a child that has exited and been reaped: no process has it now.
pid_t DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

void Touch(const fs::path& path, std::chrono::minutes age) {
  std::ofstream(path) << "x";
  fs::last_write_time(path, fs::file_time_type::clock::now() - age);
}

TEST(NativeBuildSweep, RemovesOnlyOldTemporariesOfDeadProcesses) {
  const fs::path dir = fs::temp_directory_path() / ("ke-sweep-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string dead = std::to_string(DeadPid());
  const std::string alive = std::to_string(getppid());
  const std::string self = std::to_string(getpid());
  Touch(dir / ("abc.tmp." + dead + ".0.so"), std::chrono::minutes(30));        // a killed build's object
  fs::create_directories(dir / ("abc.tmp." + dead + ".1.so.d"));              // its TMPDIR folder
  Touch(dir / ("abc.tmp." + dead + ".1.so.d") / "cc1.s", std::chrono::minutes(30));
  fs::last_write_time(dir / ("abc.tmp." + dead + ".1.so.d"), fs::file_time_type::clock::now() - std::chrono::minutes(30));
  Touch(dir / ("abc.cpp.tmp." + dead + ".2"), std::chrono::minutes(30));      // WriteFileAtomically's
  Touch(dir / ("def.tmp." + dead + ".3.so"), std::chrono::minutes(1));        // too recent: another namespace's?
  Touch(dir / ("ghi.tmp." + alive + ".0.so"), std::chrono::minutes(30));      // a live process's
  Touch(dir / ("jkl.tmp." + self + ".0.so"), std::chrono::minutes(30));       // this process's
  Touch(dir / "abc.so", std::chrono::minutes(30));                             // a finished build
  Touch(dir / "abc.cpp", std::chrono::minutes(30));

  EXPECT_EQ(SweepStaleTemporaries(dir), 3);
  EXPECT_FALSE(fs::exists(dir / ("abc.tmp." + dead + ".0.so")));
  EXPECT_FALSE(fs::exists(dir / ("abc.tmp." + dead + ".1.so.d")));
  EXPECT_FALSE(fs::exists(dir / ("abc.cpp.tmp." + dead + ".2")));
  for (const std::string kept : {"def.tmp." + dead + ".3.so", "ghi.tmp." + alive + ".0.so",
                                 "jkl.tmp." + self + ".0.so", std::string("abc.so"), std::string("abc.cpp")}) {
    EXPECT_TRUE(fs::exists(dir / kept)) << kept;
  }
  EXPECT_EQ(SweepStaleTemporaries(dir / "missing"), 0);  // no folder: nothing to do, no throw
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve::platforms

// Helpers of the issue-22 tests: start the kernelevolve binary (or another program),
// wait for it, read a run's store.
#pragma once

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kernelevolve::scale_test {

namespace fs = std::filesystem;

/// One integer from a read-only query, or -1 when the file or table is not there yet.
inline int64_t QueryInt(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

/// One text value from a read-only query; "" when absent.
inline std::string QueryText(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string value;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW &&
        sqlite3_column_text(stmt, 0) != nullptr) {
      value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

/// Starts `program` with `args` in the source tree; stdout and stderr go to `log`.
/// Returns its pid.
inline pid_t SpawnProgram(const std::string& program, const std::vector<std::string>& args, const fs::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(KE_SOURCE_DIR) != 0) _exit(127);
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out == nullptr || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(127);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(program.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

/// Starts the kernelevolve binary of this build with `args`.
inline pid_t Spawn(const std::vector<std::string>& args, const fs::path& log) {
  return SpawnProgram(KE_BINARY_PATH, args, log);
}

/// The exit code, or -1 when the process died of a signal.
inline int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Polls `ready` every 50 ms until it holds or `seconds` pass; returns its last value.
inline bool WaitFor(const std::function<bool()>& ready, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ready();
}

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Runs kernelevolve `args` with its output in `log` and checks a refusal before any
/// work: exit 2, one line of output, `text` in it. Returns the output.
inline std::string ExpectOneLineRefusal(const std::vector<std::string>& args, const fs::path& log,
                                        const std::string& text) {
  EXPECT_EQ(WaitExit(Spawn(args, log)), 2) << args.at(0);
  const std::string out = ReadFile(log);
  EXPECT_NE(out.find(text), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  return out;
}

/// An empty folder <tmp>/<name>_<pid>.
inline fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace kernelevolve::scale_test

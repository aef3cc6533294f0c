// Helpers shared by the integration tests that run the kernelevolve binary.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <sqlite3.h>

namespace kernelevolve::testing_util {

/// Shell environment prefix for the tests of the no-GPU Triton path: the interpreter,
/// with any GPU hidden, so that they check the same thing on a GPU machine (there, with
/// the GPU visible, eager PyTorch would run on it and the kernel-origin check would
/// see the interpreter's host copies as foreign kernels).
inline constexpr const char* kInterpretWithoutGpuEnv = "TRITON_INTERPRET=1 CUDA_VISIBLE_DEVICES=";

/// The whole file as text ("" when it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// An empty folder <tmp>/<prefix>_<pid>_<current test name, '/' as '_'>, created afresh.
inline std::filesystem::path FreshTestDir(const std::string& prefix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  // A parameterized test's name holds a '/' ("Name/0"): flattened, so that removing
  // the folder removes it all.
  std::string name = info == nullptr ? "" : info->name();
  std::replace(name.begin(), name.end(), '/', '_');
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("{}_{}_{}", prefix, ::getpid(), name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// The first column of the first row of `sql` over the SQLite file `db_path` (a run's
/// kernelevolve.db), read-only; -1 when the query gives no row.
inline int64_t CountRows(const std::filesystem::path& db_path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    n = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return n;
}

}  // namespace kernelevolve::testing_util

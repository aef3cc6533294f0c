// The fixture shared by the platform tests on a real GPU (tests/gpu/cuda_gpu_test.cpp,
// tests/gpu/triton_gpu_test.cpp): a fresh folder per test holding the ReLU fixtures of
// tests/unit/relu_fixtures.h, and a platform on the GPU runner, the test skipped where
// the machine cannot make one.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "../unit/relu_fixtures.h"
#include "core/error.h"
#include "core/problem.h"
#include "platforms/platform.h"
#include "problem/worker_client.h"

namespace kernelevolve::gpu_test {

/// SetUp unsets TRITON_INTERPRET (the tests run on the GPU), makes the folder
/// <temp>/<folder_prefix>_<pid>_<test name> with the ReLU fixtures in fixtures/
/// (problem_), builds platform_ with MakePlatform(dir_ / "cache", runner options logging
/// to dir_ / "gpu_runner.log") and sets options_ (30 s timeout, 0.02 s minimum timing).
/// A core::InvalidInputError from MakePlatform skips the test with `skip_reason` and its
/// message. TearDown keeps the folder of a failed test for inspection.
template <class Platform>
class GpuPlatformTest : public ::testing::Test {
 protected:
  GpuPlatformTest(std::string folder_prefix, std::string skip_reason)
      : folder_prefix_(std::move(folder_prefix)), skip_reason_(std::move(skip_reason)) {}

  /// The platform under test; throws core::InvalidInputError where the machine lacks
  /// what it needs (no GPU, no compiler).
  virtual std::unique_ptr<Platform> MakePlatform(const std::filesystem::path& cache_dir,
                                                 const problem::WorkerOptions& runner) = 0;

  void SetUp() override {
    ::unsetenv("TRITON_INTERPRET");
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("{}_{}_{}", folder_prefix_, ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "fixtures");
    problem_ = testing_util::WriteReluFixtures(dir_ / "fixtures");
    problem::WorkerOptions runner;
    runner.log_path = dir_ / "gpu_runner.log";
    try {
      platform_ = MakePlatform(dir_ / "cache", runner);
    } catch (const core::InvalidInputError& e) {
      GTEST_SKIP() << skip_reason_ << e.what();
    }
    options_.timeout_seconds = 30;
    options_.min_time_seconds = 0.02;
  }
  void TearDown() override {
    platform_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  core::Problem problem_;
  std::unique_ptr<Platform> platform_;
  platforms::RunOptions options_;

 private:
  std::string folder_prefix_;
  std::string skip_reason_;
};

}  // namespace kernelevolve::gpu_test

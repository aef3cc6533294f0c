// The pure parts of the anti-cheat checks: symbol allow-list, constant and stale
// outputs, guarded buffers, thread counting (the end-to-end cases are in
// adversarial_test.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "platforms/cpu/harness_checks.h"
#include "platforms/cpu/harness_guard.h"
#include "platforms/cpu/symbol_check.h"

namespace kernelevolve::platforms::cpu {
namespace {

TEST(SymbolCheckTest, AllowsTheRuntimeAndOpenMP) {
  const char* nm = R"(                 U GOMP_parallel@GOMP_4.0
                 w _ITM_deregisterTMCloneTable
                 U _Unwind_Resume@GCC_3.0
                 U _ZNSt6thread4joinEv@GLIBCXX_3.4.11
                 U _ZdlPvm@CXXABI_1.3.9
                 w __cxa_finalize
                 w __gmon_start__
                 U expf@GLIBC_2.27
                 U omp_get_num_threads@OMP_1.0
)";
  EXPECT_EQ(CheckUndefinedSymbols(nm), std::nullopt);
  EXPECT_EQ(CheckUndefinedSymbols(""), std::nullopt);
}

TEST(SymbolCheckTest, RejectsForeignLibrariesAndForbiddenCalls) {
  EXPECT_EQ(CheckUndefinedSymbols("  U cblas_sgemm\n").value_or("").rfind("links to a forbidden symbol: cblas_sgemm;", 0), 0u);
  EXPECT_NE(CheckUndefinedSymbols("  U sgemm_\n  U expf@GLIBC_2.27\n"), std::nullopt);
  auto torch = CheckUndefinedSymbols("  U _ZN2at5relu_ERKNS_6TensorE\n  U _ZN3c106detail14torchCheckFailEv\n");
  ASSERT_TRUE(torch.has_value());
  EXPECT_NE(torch->find("at::relu_(at::Tensor const&) (and 1 more)"), std::string::npos) << *torch;
  for (const char* call : {"dlopen@GLIBC_2.34", "system@GLIBC_2.2.5", "fork@GLIBC_2.2.5", "execve@GLIBC_2.2.5",
                           "popen@GLIBC_2.2.5", "socket@GLIBC_2.2.5", "syscall@GLIBC_2.2.5"}) {
    EXPECT_NE(CheckUndefinedSymbols(std::string("  U ") + call + "\n"), std::nullopt) << call;
  }
}

eval::HostTensor Floats(const std::string& name, std::vector<float> values) {
  eval::HostTensor t{name, core::DType::kFloat32, {static_cast<int64_t>(values.size())}, {}};
  t.bytes.resize(values.size() * sizeof(float));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

TEST(OutputChecksTest, ConstantOutputOnlyWhenTheReferenceVaries) {
  auto reference = Floats("output.0", {0, 1, 2, 0});
  auto zeros = Floats("output.0", {0, 0, 0, 0});
  auto reason = ConstantOutputReason(zeros, reference);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "output.0 is constant (every element equals 0) while the reference varies");
  EXPECT_EQ(ConstantOutputReason(zeros, Floats("output.0", {0, 0, 0, 0})), std::nullopt);
  EXPECT_EQ(ConstantOutputReason(reference, reference), std::nullopt);
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(ConstantOutputReason(Floats("output.0", {nan, nan, nan, nan}), reference), std::nullopt);
}

TEST(OutputChecksTest, StaleResultNamesTheSeedItCameFrom) {
  std::vector<SeedFixture> seeds(2);
  seeds[0].seed = 10;
  seeds[0].references = {Floats("output.0", {1, 2, 3})};
  seeds[1].seed = 11;
  seeds[1].references = {Floats("output.0", {4, 5, 6})};
  core::Tolerance tol{1e-4, 1e-4};
  auto reason = StaleResultReason(Floats("output.0", {1, 2, 3}), 0, 1, seeds, tol);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "output.0 on seed 11 is the result for seed 10: a result reused from an earlier call");
  EXPECT_EQ(StaleResultReason(Floats("output.0", {7, 8, 9}), 0, 1, seeds, tol), std::nullopt);
}

TEST(GuardedBufferTest, CanariesCatchWritesJustOutsideTheData) {
  GuardedBuffer buffer(100, "output.3");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.Data()) % 64, 0u);
  std::memset(buffer.Data(), 1, 100);  // the whole data is writable
  EXPECT_EQ(buffer.CheckCanaries(), std::nullopt);
  buffer.Data()[100] = std::byte{0};
  EXPECT_EQ(buffer.CheckCanaries().value_or(""), "wrote outside output.3: 1 byte(s) after its end changed");
  buffer.WriteCanaries();
  buffer.Data()[-2] = std::byte{0};
  EXPECT_EQ(buffer.CheckCanaries().value_or(""), "wrote outside output.3: 1 byte(s) before its start changed");
}

TEST(GuardedBufferTest, GuardPageFollowsASixtyFourByteMultiple) {
  GuardedBuffer buffer(4096 * 3, "output.0");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.Data() + 4096 * 3) % 4096, 0u);
  EXPECT_DEATH(buffer.Data()[4096 * 3] = std::byte{1}, "");
}

TEST(ThreadCounterTest, SeesAThreadComeAndGo) {
  ThreadCounter counter;
  int before = counter.Count();
  ASSERT_GT(before, 0);
  std::atomic<bool> stop{false};
  std::thread worker([&] {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_EQ(counter.Count(), before + 1);
  stop = true;
  worker.join();
  EXPECT_EQ(counter.Count(), before);
}

}  // namespace
}  // namespace kernelevolve::platforms::cpu

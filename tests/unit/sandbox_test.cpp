#include "eval/sandbox.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace kernelevolve::eval {
namespace {

namespace fs = std::filesystem;

// The test binary doubles as the sandboxed child: when KE_SANDBOX_TEST_CHILD is set,
// this static initializer runs the requested behaviour and exits before gtest starts.
//   malloc:BYTES   exit 0 if malloc(BYTES)+memset failed, 1 if it succeeded
//   connect:PORT   exit 0 if a TCP connect to 127.0.0.1:PORT failed, 1 if it succeeded
int RunChildMode(const char* mode) {
  if (std::strncmp(mode, "malloc:", 7) == 0) {
    size_t bytes = std::strtoull(mode + 7, nullptr, 10);
    void* p = std::malloc(bytes);
    if (p == nullptr) return 0;
    std::memset(p, 1, bytes);
    return 1;
  }
  if (std::strncmp(mode, "connect:", 8) == 0) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::atoi(mode + 8)));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int r = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    if (r != 0) std::fprintf(stderr, "connect: %s\n", std::strerror(errno));
    return r == 0 ? 1 : 0;
  }
  return 99;
}

[[maybe_unused]] const bool kChildModeRan = [] {
  const char* mode = std::getenv("KE_SANDBOX_TEST_CHILD");
  if (mode != nullptr) _exit(RunChildMode(mode));
  return false;
}();

std::string SelfExe() { return fs::read_symlink("/proc/self/exe").string(); }

SandboxLimits QuickLimits() {
  SandboxLimits limits;
  limits.wall_timeout_seconds = 10;
  return limits;
}

SandboxResult Shell(const std::string& script, const SandboxLimits& limits = QuickLimits(),
                    const fs::path& cwd = fs::temp_directory_path()) {
  return RunSandboxed({"/bin/sh", "-c", script}, {{"PATH", "/usr/bin:/bin"}}, cwd, limits);
}

// True when `pid` no longer runs: gone, or a zombie waiting for its new parent.
bool ProcessDead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

// Pids of this process's children, zombies included (scans /proc/<pid>/stat for the
// parent pid, field 4).
std::string OwnChildren() {
  std::string found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    if (!std::getline(stat, text)) continue;
    auto paren = text.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(text.substr(paren + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid == getpid()) found += entry.path().filename().string() + "(" + state + ") ";
  }
  return found;
}

pid_t ReadPid(const fs::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ke-sandbox-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SandboxTest, ReportsExitCodeAndCapturesBothStreams) {
  auto result = Shell("echo hello; echo oops >&2; exit 7");
  EXPECT_EQ(result.exit_code, 7);
  EXPECT_EQ(result.signal, 0);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.stdout_text, "hello\n");
  EXPECT_EQ(result.stderr_text, "oops\n");
  EXPECT_GT(result.wall_seconds, 0);
}

TEST_F(SandboxTest, ReportsTerminatingSignal) {
  auto result = Shell("kill -SEGV $$");
  EXPECT_EQ(result.signal, SIGSEGV);
  EXPECT_FALSE(result.timed_out);
}

TEST_F(SandboxTest, PassesExactlyTheGivenEnvironmentAndWorkingDirectory) {
  auto env = RunSandboxed({"/usr/bin/env"}, {{"ONLY", "this"}}, dir_, QuickLimits());
  EXPECT_EQ(env.stdout_text, "ONLY=this\n");
  auto pwd = RunSandboxed({"/bin/pwd"}, {}, dir_, QuickLimits());
  EXPECT_EQ(pwd.stdout_text, fs::canonical(dir_).string() + "\n");
}

TEST_F(SandboxTest, MissingProgramIsReportedNotThrown) {
  auto result = RunSandboxed({"/no/such/program"}, {}, dir_, QuickLimits());
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_NE(result.stderr_text.find("cannot execute '/no/such/program'"), std::string::npos)
      << result.stderr_text;
}

TEST_F(SandboxTest, TimeoutKillsTheWholeProcessGroupIncludingGrandchildren) {
  SandboxLimits limits = QuickLimits();
  limits.wall_timeout_seconds = 0.5;
  fs::path pid_file = dir_ / "grandchild.pid";
  auto result = Shell("sleep 30 & echo $! > " + pid_file.string() + "; wait", limits);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_LT(result.wall_seconds, 3.0);
  pid_t grandchild = ReadPid(pid_file);
  ASSERT_GT(grandchild, 0);
  // SIGKILL delivery is asynchronous; give the kernel a moment.
  for (int i = 0; i < 50 && !ProcessDead(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(ProcessDead(grandchild)) << "grandchild sleep " << grandchild << " survived";
  EXPECT_EQ(OwnChildren(), "") << "the sandboxed child was not reaped";
}

TEST_F(SandboxTest, NormalExitStillKillsLeftoverBackgroundWork) {
  fs::path pid_file = dir_ / "leftover.pid";
  // The background sleep keeps the stdout pipe open: without the group kill the parent
  // would wait for it.
  auto result = Shell("sleep 30 & echo $! > " + pid_file.string() + "; echo done");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.stdout_text, "done\n");
  EXPECT_LT(result.wall_seconds, 3.0);
  pid_t leftover = ReadPid(pid_file);
  ASSERT_GT(leftover, 0);
  for (int i = 0; i < 50 && !ProcessDead(leftover); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(ProcessDead(leftover)) << "background sleep " << leftover << " survived";
  EXPECT_EQ(OwnChildren(), "") << "the sandboxed child was not reaped";
}

TEST_F(SandboxTest, MemoryLimitMakesLargeAllocationFail) {
  SandboxLimits limits = QuickLimits();
  limits.memory_bytes = 512LL << 20;
  std::map<std::string, std::string> env = {{"KE_SANDBOX_TEST_CHILD", "malloc:2147483648"}};
  auto limited = RunSandboxed({SelfExe()}, env, dir_, limits);
  EXPECT_EQ(limited.exit_code, 0) << "2 GiB malloc succeeded under a 512 MiB RLIMIT_AS";
  // Control: a small allocation under the same limit works.
  env["KE_SANDBOX_TEST_CHILD"] = "malloc:1048576";
  auto small = RunSandboxed({SelfExe()}, env, dir_, limits);
  EXPECT_EQ(small.exit_code, 1);
}

TEST_F(SandboxTest, CpuLimitStopsASpinningChild) {
  SandboxLimits limits = QuickLimits();
  limits.cpu_seconds = 1;
  auto result = Shell("while :; do :; done", limits);
  EXPECT_EQ(result.signal, SIGXCPU);
  EXPECT_FALSE(result.timed_out);
}

TEST_F(SandboxTest, OutputBeyondTheCapKeepsHeadAndTail) {
  SandboxLimits limits = QuickLimits();
  limits.max_output_bytes = 1000;
  auto result = Shell("echo FIRST; yes | head -c 200000; echo LAST", limits);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_LT(result.stdout_text.size(), 1100u);
  EXPECT_EQ(result.stdout_text.rfind("FIRST\n", 0), 0u);
  EXPECT_NE(result.stdout_text.find("bytes dropped"), std::string::npos);
  EXPECT_TRUE(result.stdout_text.ends_with("LAST\n"));
}

TEST_F(SandboxTest, NetworkNamespaceCutsOffLoopback) {
  int server = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(server, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(server, 4), 0);
  socklen_t len = sizeof(addr);
  getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string mode = "connect:" + std::to_string(ntohs(addr.sin_port));

  SandboxLimits open_limits = QuickLimits();
  open_limits.isolate_network = false;
  auto open = RunSandboxed({SelfExe()}, {{"KE_SANDBOX_TEST_CHILD", mode}}, dir_, open_limits);
  auto isolated = RunSandboxed({SelfExe()}, {{"KE_SANDBOX_TEST_CHILD", mode}}, dir_, QuickLimits());
  close(server);

  EXPECT_FALSE(open.network_isolated);
  EXPECT_EQ(open.exit_code, 1) << "control: connect on the host network failed: " << open.stderr_text;
  if (!isolated.network_isolated) {
    GTEST_SKIP() << "unshare(CLONE_NEWNET) not permitted here (uid " << geteuid()
                 << "); the sandbox falls back to the host network";
  }
  EXPECT_EQ(isolated.exit_code, 0) << "connect to the host's 127.0.0.1 succeeded inside the namespace";
}

TEST_F(SandboxTest, ReadOnlyFileSystemLeavesOnlyTheWritablePathsWritable) {
  const fs::path writable = dir_ / "scratch";
  const fs::path outside = dir_ / "outside";
  fs::create_directories(writable);
  fs::create_directories(outside);
  SandboxLimits limits = QuickLimits();
  limits.read_only_filesystem = true;
  limits.writable_paths = {writable};
  const std::string script = "echo a > " + (writable / "ok").string() + " && echo in-ok; echo b > " +
                             (outside / "no").string() + " && echo out-ok; echo c > /dev/null && echo null-ok; true";
  SandboxResult result = Shell(script, limits, writable);
  if (!result.filesystem_read_only) {
    GTEST_SKIP() << "no mount namespace here (uid " << geteuid() << "); the sandbox falls back to the normal view";
  }
  EXPECT_NE(result.stdout_text.find("in-ok"), std::string::npos) << result.stderr_text;
  EXPECT_NE(result.stdout_text.find("null-ok"), std::string::npos) << result.stderr_text;
  EXPECT_EQ(result.stdout_text.find("out-ok"), std::string::npos) << "wrote outside the writable paths";
  EXPECT_NE(result.stderr_text.find("Read-only file system"), std::string::npos) << result.stderr_text;
  EXPECT_TRUE(fs::exists(writable / "ok"));
  EXPECT_FALSE(fs::exists(outside / "no"));

  // The host's view is untouched: the same write works without the option.
  SandboxResult normal = Shell("echo b > " + (outside / "no").string(), QuickLimits(), writable);
  EXPECT_FALSE(normal.filesystem_read_only);
  EXPECT_EQ(normal.exit_code, 0) << normal.stderr_text;
}

}  // namespace
}  // namespace kernelevolve::eval

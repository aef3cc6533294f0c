#include "platforms/cpu/syscall_filter.h"

#include <seccomp.h>
#include <signal.h>
#include <sched.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelevolve::platforms::cpu {
namespace {

constexpr int kMaxSyscall = 1024;
constexpr std::size_t kMaxPath = 512;

int g_verdict_fd = -1;
char* g_verdicts[kMaxSyscall] = {};  // pre-built verdict line per trapped syscall number
std::size_t g_verdict_bytes[kMaxSyscall] = {};
bool g_is_open[kMaxSyscall] = {};
int g_path_arg[kMaxSyscall] = {};     // which argument holds the path (open: 0, openat: 1)
char g_path[kMaxPath] = {};
volatile sig_atomic_t g_open_attempted = 0;

// Files the C runtime and OpenMP read on their own (glibc's get_nprocs behind
// std::thread::hardware_concurrency reads /sys/devices/system/cpu/online; glibc's malloc
// reads /proc/sys/vm/overcommit_memory the first time it shrinks a thread arena's heap,
// as when an OpenMP thread frees its scratch vectors). Opening them still fails with
// EACCES (the runtime falls back to sched_getaffinity; malloc then releases pages with
// madvise instead of shrinking the mapping), but it is not held against the kernel.
constexpr const char* kRuntimeProbes[] = {"/sys/devices/system/cpu/", "/proc/stat",    "/proc/cpuinfo",
                                          "/proc/meminfo",            "/sys/fs/cgroup/", "/proc/sys/vm/overcommit_memory"};

bool IsRuntimeProbe(const char* path) {
  for (const char* prefix : kRuntimeProbes) {
    std::size_t i = 0;
    while (prefix[i] != '\0' && path[i] == prefix[i]) ++i;
    if (prefix[i] == '\0') return true;
  }
  return false;
}

std::string VerdictLine(const std::string& message) {
  nlohmann::json verdict = {{"status", "rejected_by_check"}, {"message", message},
                            {"correct", false}, {"checks", nlohmann::json::array()}};
  return "\n" + verdict.dump() + "\n";
}

#if defined(__x86_64__)
greg_t* Argument(ucontext_t* context, int index) {
  static constexpr int kRegs[] = {REG_RDI, REG_RSI, REG_RDX, REG_R10, REG_R8, REG_R9};
  return &context->uc_mcontext.gregs[kRegs[index]];
}
void SetReturn(ucontext_t* context, long value) { context->uc_mcontext.gregs[REG_RAX] = value; }
#elif defined(__aarch64__)
unsigned long long* Argument(ucontext_t* context, int index) { return &context->uc_mcontext.regs[index]; }
void SetReturn(ucontext_t* context, long value) { context->uc_mcontext.regs[0] = static_cast<unsigned long long>(value); }
#endif

void OnSigsys(int, siginfo_t* info, void* raw_context) {
  int nr = info->si_syscall;
  if (nr >= 0 && nr < kMaxSyscall && g_is_open[nr]) {
#if defined(__x86_64__) || defined(__aarch64__)
    auto* context = static_cast<ucontext_t*>(raw_context);
    const char* path = reinterpret_cast<const char*>(*Argument(context, g_path_arg[nr]));
    if (!g_open_attempted && path != nullptr && !IsRuntimeProbe(path)) {
      std::size_t i = 0;
      for (; i + 1 < kMaxPath && path[i] != '\0'; ++i) g_path[i] = path[i];
      g_path[i] = '\0';
      g_open_attempted = 1;
    }
    SetReturn(context, -EACCES);
    return;
#endif
  }
  const char* line = nr >= 0 && nr < kMaxSyscall ? g_verdicts[nr] : nullptr;
  if (line != nullptr && g_verdict_fd >= 0) {
    std::size_t left = g_verdict_bytes[nr];
    while (left > 0) {
      ssize_t n = write(g_verdict_fd, line, left);
      if (n <= 0) break;
      line += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  _exit(line != nullptr ? 0 : 4);
}

/// A trapped system call and the message of its verdict.
struct Trap {
  const char* name;
  std::string message;
};

std::vector<Trap> Traps() {
  std::vector<Trap> traps;
  for (const char* name : {"fork", "vfork", "clone"}) traps.push_back({name, std::string("tried to spawn a process (") + name + ")"});
  for (const char* name : {"execve", "execveat"}) traps.push_back({name, std::string("tried to execute a program (") + name + ")"});
  for (const char* name : {"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4"}) {
    traps.push_back({name, std::string("tried to open a socket (") + name + ")"});
  }
  for (const char* name : {"setsid", "setpgid", "ptrace", "process_vm_readv", "process_vm_writev", "unshare",
                           "mount", "chroot", "rt_sigaction", "seccomp", "name_to_handle_at", "open_by_handle_at"}) {
    traps.push_back({name, std::string("made a forbidden system call (") + name + ")"});
  }
  return traps;
}

int AddTrap(scmp_filter_ctx ctx, int nr, const std::string& name) {
  if (name == "clone") {
    return seccomp_rule_add(ctx, SCMP_ACT_TRAP, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  }
  if (name == "rt_sigaction") {  // the harness's own SIGSYS/SIGSEGV/SIGBUS handlers stay
    for (int sig : {SIGSYS, SIGSEGV, SIGBUS}) {
      if (int rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, nr, 1, SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(sig))); rc != 0) return rc;
    }
    return 0;
  }
  return seccomp_rule_add(ctx, SCMP_ACT_TRAP, nr, 0);
}

}  // namespace

std::optional<std::string> InstallSyscallFilter(int verdict_fd) {
  g_verdict_fd = verdict_fd;
  struct sigaction action {};
  action.sa_sigaction = OnSigsys;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSYS, &action, nullptr) != 0) return std::string("sigaction(SIGSYS): ") + std::strerror(errno);

  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return std::string("seccomp_init failed");
  std::string error;
  seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  for (const auto& [name, path_arg] : std::vector<std::pair<const char*, int>>{
           {"open", 0}, {"creat", 0}, {"openat", 1}, {"openat2", 1}}) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr < 0 || nr >= kMaxSyscall) continue;  // not on this architecture
    g_is_open[nr] = true;
    g_path_arg[nr] = path_arg;
#if defined(__x86_64__) || defined(__aarch64__)
    const uint32_t action = SCMP_ACT_TRAP;  // the handler records the path and returns EACCES
#else
    const uint32_t action = SCMP_ACT_ERRNO(EACCES);  // no register access: deny without a record
#endif
    if (seccomp_rule_add(ctx, action, nr, 0) != 0) error = std::string("rule for ") + name;
  }
  for (const auto& trap : Traps()) {
    int nr = seccomp_syscall_resolve_name(trap.name);
    if (nr < 0 || nr >= kMaxSyscall) continue;
    std::string line = VerdictLine(trap.message);
    g_verdicts[nr] = new char[line.size()];
    std::memcpy(g_verdicts[nr], line.data(), line.size());
    g_verdict_bytes[nr] = line.size();
    if (AddTrap(ctx, nr, trap.name) != 0) error = std::string("rule for ") + trap.name;
  }
  int clone3 = seccomp_syscall_resolve_name("clone3");
  if (clone3 >= 0 && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0) != 0) error = "rule for clone3";
  if (error.empty()) {
    if (int rc = seccomp_load(ctx); rc != 0) error = std::string("seccomp_load: ") + std::strerror(-rc);
  }
  seccomp_release(ctx);
  if (!error.empty()) return "cannot install the seccomp filter: " + error;
  return std::nullopt;
}

std::optional<std::string> FileOpenAttempt() {
  if (!g_open_attempted) return std::nullopt;
  return std::string(g_path);
}

}  // namespace kernelevolve::platforms::cpu

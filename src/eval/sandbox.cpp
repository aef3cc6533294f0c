#include "eval/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/error.h"

namespace kernelevolve::eval {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes the child writes on the status pipe before execve (the pipe is close-on-exec,
// so end-of-file there means the exec succeeded).
constexpr char kNetIsolated = 'N';
constexpr char kNetHost = 'H';
constexpr char kFsReadOnly = 'R';
constexpr char kFsWritable = 'W';
constexpr char kExecFailed = 'E';

// How long the parent keeps draining the pipes after the child has been reaped and its
// process group killed (a descendant outside the group may still hold them open).
constexpr double kDrainGraceSeconds = 0.2;

// Poll tick while waiting for a child that closed its pipes, used when pidfd_open is
// unavailable (kernels before 5.3).
constexpr int kWaitTickMs = 10;

/// Everything execve needs, built before fork(): after fork in a possibly threaded
/// parent the child may only call async-signal-safe functions (POSIX fork()).
struct ExecPlan {
  std::vector<std::string> env_strings;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string cwd;
  rlimit as{}, cpu{}, fsize{}, core{};
  bool isolate_network = true;
  bool read_only_filesystem = false;
  std::vector<std::string> writable_paths;
};

ExecPlan MakePlan(const std::vector<std::string>& argv,
                  const std::map<std::string, std::string>& env,
                  const std::filesystem::path& cwd, const SandboxLimits& limits) {
  ExecPlan plan;
  for (const auto& arg : argv) plan.argv.push_back(const_cast<char*>(arg.c_str()));
  plan.argv.push_back(nullptr);
  for (const auto& [key, value] : env) plan.env_strings.push_back(key + "=" + value);
  for (auto& entry : plan.env_strings) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  plan.cwd = cwd.empty() ? "." : cwd.string();

  auto limit = [](int64_t value) {
    rlim_t r = value > 0 ? static_cast<rlim_t>(value) : RLIM_INFINITY;
    return rlimit{r, r};
  };
  plan.as = limit(limits.memory_bytes);
  int64_t cpu = limits.cpu_seconds;
  if (cpu <= 0) {
    // sandbox.h: derive 2 * threads * wall timeout; the sandbox does not know the thread
    // count, so it assumes every online CPU may be busy.
    double threads = std::max(1u, std::thread::hardware_concurrency());
    cpu = static_cast<int64_t>(std::ceil(2.0 * threads * std::max(1.0, limits.wall_timeout_seconds)));
  }
  // Soft limit sends SIGXCPU (reported as a timeout); the hard limit one second later
  // sends SIGKILL to a child that ignores it.
  plan.cpu = rlimit{static_cast<rlim_t>(cpu), static_cast<rlim_t>(cpu + 1)};
  plan.fsize = limit(limits.file_size_bytes);
  plan.core = rlimit{0, 0};
  plan.isolate_network = limits.isolate_network;
  plan.read_only_filesystem = limits.read_only_filesystem;
  for (const auto& path : limits.writable_paths) plan.writable_paths.push_back(std::filesystem::absolute(path).string());
  return plan;
}

void WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// Tries a fresh network namespace (root: CLONE_NEWNET; else a user namespace first,
// which grants the capability inside it). Async-signal-safe.
bool UnshareNetwork() {
  if (geteuid() == 0 && unshare(CLONE_NEWNET) == 0) return true;
  return unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;
}

/// mount_setattr(2) on `path` and every mount below it (Linux 5.12; struct mount_attr
/// from linux/mount.h). Async-signal-safe.
bool SetMountAttr(const char* path, uint64_t set, uint64_t clear) {
  struct mount_attr attr {};
  attr.attr_set = set;
  attr.attr_clr = clear;
  return syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof(attr)) == 0;
}

/// In a fresh mount namespace (root: CLONE_NEWNS; else inside the user namespace the
/// network step made, or a new one): stops propagation to the host, bind-mounts each
/// writable path onto itself, makes every mount read-only, then writable paths
/// writable again. On a failure after "/" went read-only, everything is made writable
/// again so the child runs as without the option. Async-signal-safe.
bool MakeFilesystemReadOnly(const ExecPlan& plan, bool in_user_namespace) {
  bool ns = (geteuid() == 0 || in_user_namespace) ? unshare(CLONE_NEWNS) == 0 : false;
  if (!ns) ns = unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0;
  if (!ns) return false;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  for (const auto& path : plan.writable_paths) {
    if (mount(path.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return false;
  }
  if (!SetMountAttr("/", MOUNT_ATTR_RDONLY, 0)) return false;
  for (const auto& path : plan.writable_paths) {
    if (!SetMountAttr(path.c_str(), 0, MOUNT_ATTR_RDONLY)) {
      SetMountAttr("/", 0, MOUNT_ATTR_RDONLY);
      return false;
    }
  }
  return true;
}

[[noreturn]] void ChildMain(const ExecPlan& plan, int out_fd, int err_fd, int status_fd) {
  setsid();  // new session and process group: pgid == pid
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Restore what the parent may have changed: default SIGPIPE, empty signal mask.
  signal(SIGPIPE, SIG_DFL);
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);

  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  // Every other inherited descriptor closes at exec (the status pipe already does).
  if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 4096; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);  // kernels before 5.11
  }

  char net = kNetHost;
  if (plan.isolate_network && UnshareNetwork()) net = kNetIsolated;
  WriteAll(status_fd, &net, 1);
  const bool in_user_namespace = net == kNetIsolated && geteuid() != 0;
  char fs = kFsWritable;
  if (plan.read_only_filesystem && MakeFilesystemReadOnly(plan, in_user_namespace)) fs = kFsReadOnly;
  WriteAll(status_fd, &fs, 1);

  setrlimit(RLIMIT_AS, &plan.as);
  setrlimit(RLIMIT_CPU, &plan.cpu);
  setrlimit(RLIMIT_FSIZE, &plan.fsize);
  setrlimit(RLIMIT_CORE, &plan.core);

  int error = 0;
  if (chdir(plan.cwd.c_str()) != 0) {
    error = errno;
  } else {
    execve(plan.argv[0], plan.argv.data(), plan.envp.data());
    error = errno;
  }
  char report[1 + sizeof(int)];
  report[0] = kExecFailed;
  std::memcpy(report + 1, &error, sizeof(int));
  WriteAll(status_fd, report, sizeof(report));
  _exit(127);
}

/// One pipe read by the parent, with its capture buffer. Output beyond the cap keeps
/// the first half and the last half of the cap, with a marker in between.
struct Stream {
  int fd = -1;
  std::string head;
  std::string tail;      // ring-like tail, trimmed to cap/2
  int64_t dropped = 0;
  int64_t cap = 0;

  void Append(const char* data, size_t n) {
    size_t head_cap = static_cast<size_t>(cap / 2 + cap % 2);
    size_t to_head = std::min(n, head_cap - std::min(head_cap, head.size()));
    head.append(data, to_head);
    if (to_head == n) return;
    tail.append(data + to_head, n - to_head);
    size_t tail_cap = static_cast<size_t>(cap / 2);
    if (tail.size() > 2 * tail_cap + 4096) {
      size_t cut = tail.size() - tail_cap;
      dropped += static_cast<int64_t>(cut);
      tail.erase(0, cut);
    }
  }
  std::string Text() {
    size_t tail_cap = static_cast<size_t>(cap / 2);
    if (tail.size() > tail_cap) {
      dropped += static_cast<int64_t>(tail.size() - tail_cap);
      tail.erase(0, tail.size() - tail_cap);
    }
    if (dropped == 0) return head + tail;
    return head + "\n[... " + std::to_string(dropped) + " bytes dropped ...]\n" + tail;
  }
};

/// Reads what is available; returns false at end-of-file or on error.
bool Drain(int fd, Stream* stream, std::string* raw) {
  char buffer[65536];
  ssize_t n = read(fd, buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  if (stream) {
    stream->Append(buffer, static_cast<size_t>(n));
  } else {
    raw->append(buffer, static_cast<size_t>(n));
  }
  return true;
}

void KillGroup(pid_t pid) {
  kill(-pid, SIGKILL);  // the child's process group (it called setsid)
  kill(pid, SIGKILL);   // in case it was killed before setsid ran
}

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/// The parent's side: collects output, enforces the wall timeout, reaps the child.
class Supervisor {
 public:
  Supervisor(std::string program, pid_t pid, int out_fd, int err_fd, int status_fd,
             const SandboxLimits& limits)
      : program_(std::move(program)), pid_(pid), status_fd_(status_fd), limits_(limits) {
    out_.fd = out_fd;
    out_.cap = limits.max_output_bytes;
    err_.fd = err_fd;
    err_.cap = limits.max_output_bytes;
    pid_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  }
  ~Supervisor() {
    CloseFd(&out_.fd);
    CloseFd(&err_.fd);
    CloseFd(&status_fd_);
    CloseFd(&pid_fd_);
  }

  SandboxResult Run(Clock::time_point start);

 private:
  /// Reaps the child if it has exited (block: wait for it), killing its group first.
  void TryReap(bool block);
  void OnExited(int wait_status);
  int PollTimeoutMs(Clock::time_point start) const;

  std::string program_;
  pid_t pid_;
  int status_fd_;
  int pid_fd_ = -1;
  Stream out_, err_;
  std::string status_bytes_;
  SandboxLimits limits_;
  bool exited_ = false;
  int wait_status_ = 0;
  bool timed_out_ = false;
  Clock::time_point drain_deadline_;
};

void Supervisor::TryReap(bool block) {
  if (exited_) return;
  if (!block) {
    // Peek without reaping, so the pid (and with it the process group id) cannot be
    // recycled before the group is killed.
    siginfo_t info{};
    int r = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r != 0 && errno == ECHILD) return OnExited(0);  // reaped elsewhere: nothing to wait for
    if (r != 0 || info.si_pid != pid_) return;          // still running (or EINTR)
  }
  KillGroup(pid_);  // nothing the child started may outlive it
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  OnExited(r == pid_ ? status : 0);
}

void Supervisor::OnExited(int wait_status) {
  exited_ = true;
  wait_status_ = wait_status;
  drain_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(kDrainGraceSeconds));
  CloseFd(&pid_fd_);
}

int Supervisor::PollTimeoutMs(Clock::time_point start) const {
  auto now = Clock::now();
  auto deadline = exited_ ? drain_deadline_
                          : start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(limits_.wall_timeout_seconds));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
  ms = std::max<int64_t>(0, ms);
  if (!exited_ && pid_fd_ < 0) ms = std::min<int64_t>(ms, kWaitTickMs);
  return static_cast<int>(std::min<int64_t>(ms, 1000));
}

SandboxResult Supervisor::Run(Clock::time_point start) {
  auto wall_deadline = start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(limits_.wall_timeout_seconds));
  while (true) {
    TryReap(false);
    bool pipes_open = out_.fd >= 0 || err_.fd >= 0 || status_fd_ >= 0;
    if (exited_ && (!pipes_open || Clock::now() >= drain_deadline_)) break;
    if (!exited_ && Clock::now() >= wall_deadline) {
      timed_out_ = true;
      TryReap(true);
      continue;
    }
    pollfd fds[4];
    int n = 0;
    for (int fd : {out_.fd, err_.fd, status_fd_, pid_fd_}) {
      if (fd >= 0) fds[n++] = pollfd{fd, POLLIN, 0};
    }
    int ready = poll(fds, static_cast<nfds_t>(n), PollTimeoutMs(start));
    if (ready < 0 && errno != EINTR) {
      std::string reason = strerror(errno);
      TryReap(true);
      throw core::IoError("sandbox: poll failed while running '" + program_ + "': " + reason);
    }
    for (int i = 0; i < n && ready > 0; ++i) {
      if (fds[i].revents == 0) continue;
      int fd = fds[i].fd;
      if (fd == pid_fd_) continue;  // reaped at the top of the loop
      bool open = Drain(fd, fd == out_.fd ? &out_ : fd == err_.fd ? &err_ : nullptr, &status_bytes_);
      if (!open) CloseFd(fd == out_.fd ? &out_.fd : fd == err_.fd ? &err_.fd : &status_fd_);
    }
  }

  SandboxResult result;
  result.wall_seconds = Since(start);
  result.timed_out = timed_out_;
  if (WIFEXITED(wait_status_)) result.exit_code = WEXITSTATUS(wait_status_);
  if (WIFSIGNALED(wait_status_)) result.signal = WTERMSIG(wait_status_);
  result.network_isolated = !status_bytes_.empty() && status_bytes_[0] == kNetIsolated;
  result.filesystem_read_only = status_bytes_.size() > 1 && status_bytes_[1] == kFsReadOnly;
  result.stdout_text = out_.Text();
  result.stderr_text = err_.Text();
  auto failed = status_bytes_.find(kExecFailed);
  if (failed != std::string::npos && status_bytes_.size() >= failed + 1 + sizeof(int)) {
    int error = 0;
    std::memcpy(&error, status_bytes_.data() + failed + 1, sizeof(int));
    result.stderr_text += "sandbox: cannot execute '" + program_ + "': " + strerror(error) + "\n";
  }
  return result;
}

}  // namespace

SandboxResult RunSandboxed(const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& env,
                           const std::filesystem::path& cwd, const SandboxLimits& limits) {
  if (argv.empty()) throw core::InternalError("RunSandboxed: empty argv");
  ExecPlan plan = MakePlan(argv, env, cwd, limits);

  int out_pipe[2], err_pipe[2], status_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) throw core::IoError(std::string("sandbox: pipe: ") + strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]), close(out_pipe[1]);
    throw core::IoError(std::string("sandbox: pipe: ") + strerror(errno));
  }
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    throw core::IoError(std::string("sandbox: pipe: ") + strerror(errno));
  }

  auto start = Clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], status_pipe[0], status_pipe[1]}) close(fd);
    throw core::IoError("sandbox: cannot fork to run '" + argv[0] + "': " + strerror(error));
  }
  if (pid == 0) ChildMain(plan, out_pipe[1], err_pipe[1], status_pipe[1]);

  close(out_pipe[1]);
  close(err_pipe[1]);
  close(status_pipe[1]);
  Supervisor supervisor(argv[0], pid, out_pipe[0], err_pipe[0], status_pipe[0], limits);
  return supervisor.Run(start);
}

}  // namespace kernelevolve::eval

#include "problem/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <sstream>

#include <fmt/format.h>

namespace kernelevolve::problem {
namespace {

using Clock = std::chrono::steady_clock;

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw WorkerLostError(fmt::format("worker: write failed: {}", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::filesystem::path DefaultPython() {
  if (const char* env = std::getenv("KERNELEVOLVE_PYTHON"); env && *env) {
    const std::string name = env;
    if (name.find('/') != std::string::npos) return name;
    // A bare name ("python3") is looked up on PATH, as a shell would.
    const char* path_env = std::getenv("PATH");
    std::stringstream path(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
    for (std::string dir; std::getline(path, dir, ':');) {
      if (!dir.empty() && ::access((std::filesystem::path(dir) / name).c_str(), X_OK) == 0) {
        return std::filesystem::path(dir) / name;
      }
    }
    return name;  // WorkerClient reports it as not found
  }
  return std::filesystem::path(KE_SOURCE_DIR) / ".venv" / "bin" / "python";
}

std::filesystem::path DefaultWorkerPackageDir() {
  return std::filesystem::path(KE_SOURCE_DIR) / "worker";
}

WorkerClient::WorkerClient(WorkerOptions options) : options_(std::move(options)) {
  if (options_.python.empty()) options_.python = DefaultPython();
  if (options_.package_dir.empty()) options_.package_dir = DefaultWorkerPackageDir();
  if (!std::filesystem::exists(options_.python)) {
    throw core::IoError(fmt::format(
        "python interpreter {} not found; run scripts/setup.sh (or set KERNELEVOLVE_PYTHON)",
        options_.python.string()));
  }
  int in_pipe[2];
  int out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw core::IoError(fmt::format("worker: pipe failed: {}", std::strerror(errno)));
  }
  int log_fd = ::open(options_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    throw core::IoError(fmt::format("worker: cannot open log {}: {}", options_.log_path.string(),
                                    std::strerror(errno)));
  }
  std::string threads = std::to_string(options_.threads);
  std::string pythonpath = options_.package_dir.string();
  std::string wait_policy = options_.omp_wait_policy;
  pid_t pid = ::fork();
  if (pid < 0) throw core::IoError(fmt::format("worker: fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    // Die with kernelevolve (no orphaned workers), and leave Ctrl-C and SIGTERM to
    // kernelevolve, which stops the search cleanly and still needs the worker (Python
    // keeps an ignored signal ignored). SIGTERM matters when it is sent to the whole
    // process group (timeout(1), kill -TERM -PGID, service managers): the worker used
    // to die of it and the run ended with "worker: write failed: Broken pipe".
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGTERM, SIG_IGN);
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::setenv("PYTHONPATH", pythonpath.c_str(), 1);
    ::setenv("PYTHONUNBUFFERED", "1", 1);
    ::setenv("OMP_NUM_THREADS", threads.c_str(), 1);
    ::setenv("MKL_NUM_THREADS", threads.c_str(), 1);
    if (!wait_policy.empty()) ::setenv("OMP_WAIT_POLICY", wait_policy.c_str(), 1);
    ::execl(options_.python.c_str(), options_.python.c_str(), "-m", "kernelevolve_worker",
            static_cast<char*>(nullptr));
    std::fprintf(stderr, "exec %s failed: %s\n", options_.python.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(log_fd);
  pid_ = pid;
  to_worker_ = in_pipe[1];
  from_worker_ = out_pipe[0];
  // A worker that dies must not kill us with SIGPIPE on the next write.
  ::signal(SIGPIPE, SIG_IGN);
}

WorkerClient::~WorkerClient() {
  try {
    Shutdown();
  } catch (...) {
  }
}

std::string WorkerClient::ReadLine(double timeout_seconds) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (true) {
    auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      Kill();
      throw WorkerLostError(
          fmt::format("worker did not answer within {:.0f} s (killed)", timeout_seconds));
    }
    pollfd pfd{from_worker_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      Kill();
      throw WorkerLostError(fmt::format("worker: poll failed: {}", std::strerror(errno)));
    }
    if (ready <= 0) continue;
    char chunk[65536];
    ssize_t n = ::read(from_worker_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Kill();
      throw WorkerLostError(fmt::format("worker {} (see {})", exit_description_,
                                        options_.log_path.string()));
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

nlohmann::json WorkerClient::Call(const std::string& method, const nlohmann::json& params,
                                  double timeout_seconds) {
  if (pid_ <= 0) throw WorkerLostError("worker is not running");
  int64_t id = next_id_++;
  nlohmann::json request = {{"id", id}, {"method", method}, {"params", params}};
  WriteAll(to_worker_, request.dump() + "\n");
  while (true) {
    std::string line = ReadLine(timeout_seconds);
    nlohmann::json response;
    try {
      response = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      Kill();
      throw WorkerLostError("worker sent a line that is not JSON: " + line.substr(0, 200));
    }
    if (!response.contains("id") || response["id"] != id) continue;  // stale answer
    if (response.value("ok", false)) return response.value("result", nlohmann::json::object());
    const auto& err = response.value("error", nlohmann::json::object());
    throw WorkerError(err.value("kind", "internal_error"),
                      err.value("message", std::string("worker error without message")),
                      err.value("traceback", std::string()));
  }
}

void WorkerClient::RedirectLog(const std::filesystem::path& log_path, double timeout_seconds) {
  Call("redirect_log", {{"path", std::filesystem::absolute(log_path).string()}}, timeout_seconds);
  options_.log_path = log_path;
}

void WorkerClient::Kill() {
  if (pid_ > 0) {
    int status = 0;
    // A worker that closed its pipe is usually exiting: give it 200 ms to report how.
    pid_t done = 0;
    for (int i = 0; i < 20 && done != pid_; ++i) {
      done = ::waitpid(pid_, &status, WNOHANG);
      if (done != pid_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (done != pid_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    if (WIFEXITED(status)) {
      exit_description_ = fmt::format("exited with status {}", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
      exit_description_ = fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                                      ::strsignal(WTERMSIG(status)));
    }
    pid_ = -1;
  }
  if (to_worker_ >= 0) ::close(to_worker_);
  if (from_worker_ >= 0) ::close(from_worker_);
  to_worker_ = from_worker_ = -1;
}

void WorkerClient::Shutdown() {
  if (pid_ <= 0) return;
  try {
    WriteAll(to_worker_, nlohmann::json({{"id", 0}, {"method", "shutdown"}, {"params", {}}}).dump() +
                             "\n");
  } catch (const WorkerLostError&) {
  }
  ::close(to_worker_);
  to_worker_ = -1;
  auto deadline = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < deadline) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Kill();
}

}  // namespace kernelevolve::problem

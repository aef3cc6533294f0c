// Client of the long-lived Python worker (worker/kernelevolve_worker), JSON lines
// over pipes. The worker imports problem files, draws inputs, runs the PyTorch
// reference, writes fixtures and times the eager baseline.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kernelevolve::problem {

/// The worker answered ok:false. `kind` is "problem_error" (the user's file is at
/// fault), "protocol_error" or "internal_error"; `traceback` is the Python traceback.
class WorkerError : public core::Error {
 public:
  WorkerError(std::string kind, const std::string& message, std::string traceback)
      : core::Error(message), kind_(std::move(kind)), traceback_(std::move(traceback)) {}
  const std::string& kind() const { return kind_; }
  const std::string& traceback() const { return traceback_; }

 private:
  std::string kind_;
  std::string traceback_;
};

/// The worker died, closed its pipe or did not answer in time. It is not reused.
class WorkerLostError : public core::IoError {
 public:
  explicit WorkerLostError(const std::string& message) : core::IoError(message) {}
};

struct WorkerOptions {
  /// Python interpreter; default: $KERNELEVOLVE_PYTHON, else <source dir>/.venv/bin/python.
  std::filesystem::path python;
  /// Folder holding the kernelevolve_worker package; default <source dir>/worker.
  std::filesystem::path package_dir;
  /// The worker's stderr (its log, tracebacks, prints from problem files) goes here.
  std::filesystem::path log_path = "/dev/null";
  int threads = 1;  // OMP/MKL thread count in the worker's environment
  std::string omp_wait_policy;  // OMP_WAIT_POLICY for eager PyTorch; "" = OpenMP default
  /// What the worker is used as ("" the problem worker, "gpu_runner"): WorkerPool hands
  /// a worker back to the same role first (a GPU runner keeps its CUDA context and its
  /// torch.compile models). Not part of the process's environment.
  std::string role;
};

class WorkerClient {
 public:
  /// Starts the worker process. Throws IoError when the interpreter is missing.
  explicit WorkerClient(WorkerOptions options);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  /// Sends one request and waits up to timeout_seconds for its answer. Returns the
  /// "result" object. Throws WorkerError (ok:false) or WorkerLostError (died, EOF,
  /// timeout, garbled line); after WorkerLostError the worker is killed.
  nlohmann::json Call(const std::string& method, const nlohmann::json& params,
                      double timeout_seconds);

  /// Points the worker's stderr (its log) at `log_path` from now on (appending), for a
  /// worker that serves another run (WorkerPool). Throws WorkerLostError when the worker
  /// is dead or does not answer within timeout_seconds, WorkerError when it cannot open
  /// the file; the old log stays in use then.
  void RedirectLog(const std::filesystem::path& log_path, double timeout_seconds);

  /// Asks the worker to exit, then kills it if it does not within 2 s.
  void Shutdown();
  bool Alive() const { return pid_ > 0; }
  /// Sets options().role (WorkerPool, when a pooled worker changes hands).
  void SetRole(std::string role) { options_.role = std::move(role); }
  /// The worker's process id, -1 once it is gone.
  pid_t pid() const { return pid_; }
  const WorkerOptions& options() const { return options_; }

 private:
  void Kill();
  std::string ReadLine(double timeout_seconds);

  WorkerOptions options_;
  pid_t pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  int64_t next_id_ = 1;
  std::string buffer_;
  std::string exit_description_ = "exited unexpectedly";
};

/// Default interpreter path (see WorkerOptions::python): $KERNELEVOLVE_PYTHON (a bare
/// name such as "python3" is looked up on PATH), else <source>/.venv/bin/python.
std::filesystem::path DefaultPython();
/// Default package folder (see WorkerOptions::package_dir).
std::filesystem::path DefaultWorkerPackageDir();

}  // namespace kernelevolve::problem

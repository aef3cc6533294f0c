// `kernelevolve worker --queue URL`: serves evaluation jobs from the Redis queue on this
// machine (issue 22; docs/scale.md).
#pragma once

#include <filesystem>
#include <string>

namespace CLI {
class App;
}

namespace kernelevolve::cli {

struct WorkerCommandOptions {
  std::string queue;                 // redis://HOST:PORT[/DB]
  std::string target = "cpu";        // the job stream it reads
  std::string gpus;                  // --gpus 0,1: CUDA_VISIBLE_DEVICES of its children
  std::string nvcc;                  // --nvcc for --target cuda; "": $CUDACXX, else nvcc on PATH
  double load_timeout_seconds = 300; // --load-timeout: GPU runner's prepare of a problem
  std::string name;                  // consumer name; "" -> <host>:<pid>
  std::filesystem::path cache_dir;   // build cache and fetched blobs; default as optimize
  double lease_seconds = 60;         // --lease: another worker takes a job idle this long
  int max_jobs = 0;                  // --max-jobs: exit after N jobs (0: no limit)
  double idle_exit_seconds = 0;      // --idle-exit: exit after S seconds without a job (0: never)
  bool quiet = false;
};

/// Adds the `worker` subcommand to `app`, filling `options`.
void AddWorkerCommand(CLI::App& app, WorkerCommandOptions& options);

/// Serves jobs until SIGINT/SIGTERM (after the job in hand), --max-jobs or --idle-exit.
/// Returns 0. Throws core::InvalidInputError (exit 2, one line) for a bad URL, an
/// unreachable Redis, an unknown target or (GPU targets) no GPU
/// and TRITON_INTERPRET unset; core::IoError when Redis fails later.
int RunWorker(const WorkerCommandOptions& options);

}  // namespace kernelevolve::cli

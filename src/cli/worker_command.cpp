#include "cli/worker_command.h"

#include <cmath>
#include <cstdlib>
#include <memory>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/gpu_target.h"
#include "cli/interrupt.h"
#include "cli/number_flags.h"
#include "cli/paths.h"
#include "cli/queue_setup.h"
#include "core/error.h"
#include "exec/queue_worker.h"
#include "platforms/cpu/cpu_platform.h"

namespace kernelevolve::cli {

namespace fs = std::filesystem;

void AddWorkerCommand(CLI::App& app, WorkerCommandOptions& o) {
  auto* cmd = app.add_subcommand(
      "worker", "serve evaluation jobs from a Redis queue: build, check and time candidates of `optimize --queue` here");
  cmd->add_option("--queue", o.queue, "the queue: redis://HOST:PORT[/DB]")->required();
  cmd->add_option("--target", o.target, "which jobs to take: cpu, triton or cuda (those of `optimize --target`)")
      ->default_val("cpu");
  cmd->add_option("--gpus", o.gpus, "CUDA_VISIBLE_DEVICES for this worker's children, e.g. 0 or 0,1");
  cmd->add_option("--nvcc", o.nvcc, "nvcc for --target cuda (default: $CUDACXX, else nvcc on PATH)");
  cmd->add_option("--load-timeout", o.load_timeout_seconds,
                  "GPU targets: seconds the GPU runner may take to prepare a problem (load its fixtures, "
                  "compile the torch.compile baseline); the problem's own load takes the orchestrator's")
      ->default_val(300)
      ->check(LoadTimeoutSeconds());
  cmd->add_option("--name", o.name, "consumer name in the queue (default <host>:<pid>)");
  cmd->add_option("--cache-dir", o.cache_dir, fmt::format("build cache and fetched fixtures ({})", kCacheDirDefaultHelp));
  cmd->add_option("--lease", o.lease_seconds,
                  "seconds a job may sit unrenewed in a worker's hands before another worker takes it over "
                  "(a live worker renews every lease/3)")
      ->default_val(60)
      ->check(PositiveSeconds());  // NaN and 0 refused in one short line (issue 22)
  cmd->add_option("--max-jobs", o.max_jobs, "exit after this many jobs (0: no limit)")->default_val(0);
  cmd->add_option("--idle-exit", o.idle_exit_seconds, "exit after this many seconds without a job (0: never)")
      ->default_val(0);
  cmd->add_flag("--quiet", o.quiet, "no line per job");
}

int RunWorker(const WorkerCommandOptions& options) {
  WorkerCommandOptions o = options;
  ValidateTarget(o.target);
  if (!std::isfinite(o.lease_seconds) || o.lease_seconds <= 0) {  // when called other than by the CLI
    throw core::InvalidInputError("--lease must be a positive number of seconds");
  }
  RefuseDeviceFixtures("worker");
  if (o.max_jobs < 0) throw core::InvalidInputError("--max-jobs must be 0 (no limit) or positive");
  if (o.idle_exit_seconds < 0) throw core::InvalidInputError("--idle-exit must be 0 (never) or positive");
  if (!o.gpus.empty()) setenv("CUDA_VISIBLE_DEVICES", o.gpus.c_str(), 1);
  if (o.cache_dir.empty()) o.cache_dir = DefaultCacheDir();
  EnsureCacheDir(o.cache_dir);
  exec::QueueWorkerOptions w;
  w.url = exec::ParseRedisUrl(o.queue);
  w.target = o.target;
  w.name = o.name;
  w.cache_dir = o.cache_dir;
  w.lease_seconds = o.lease_seconds;
  w.max_jobs = o.max_jobs;
  w.idle_exit_seconds = o.idle_exit_seconds;
  w.log_dir = o.cache_dir / "queue" / "logs";
  w.quiet = o.quiet;
  // GPU targets: one GPU runner for every job (its CUDA context and torch.compile
  // cache stay); eager is timed there, interleaved with each candidate.
  fs::create_directories(w.log_dir);
  std::unique_ptr<platforms::triton::TritonPlatform> gpu = MakeGpuPlatform(
      GpuPlatformOptions{o.target, o.cache_dir, w.log_dir / fmt::format("gpu_runner-{}.log", ::getpid()), o.nvcc,
                         o.load_timeout_seconds, o.quiet});
  std::unique_ptr<platforms::cpu::CpuPlatform> cpu;
  if (gpu) {
    w.platform_paired_eager = GpuPairedEagerTimer(*gpu);
  } else {
    cpu = std::make_unique<platforms::cpu::CpuPlatform>(o.cache_dir / "cpu", HarnessPath(), "g++");
  }
  exec::QueueWorker worker(w, gpu ? static_cast<platforms::Platform&>(*gpu) : *cpu);
  const std::atomic<bool>* stop = InstallInterruptHandler("the worker leaves after the job in flight");
  if (!o.quiet) {
    fmt::print(stderr, "worker {}: serving {} jobs from {} (lease {:.0f} s)\n",
               nlohmann::json::parse(worker.Identity()).value("worker", ""), o.target, o.queue, o.lease_seconds);
  }
  const int answered = worker.Run(stop);
  if (!o.quiet) fmt::print(stderr, "worker: {} jobs answered, exiting\n", answered);
  return 0;
}

}  // namespace kernelevolve::cli

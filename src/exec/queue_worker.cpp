#include "exec/queue_worker.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/machine.h"
#include "exec/queue_blobs.h"
#include "exec/queue_evaluator.h"
#include "problem/eager_timer.h"
#include "problem/problem_loader.h"

namespace kernelevolve::exec {
namespace {

namespace fs = std::filesystem;

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string DefaultName() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return fmt::format("{}:{}", host, ::getpid());
}

/// While alive, re-claims one pending entry for its consumer every lease/3 seconds
/// (XCLAIM ... 0 ID JUSTID resets its idle time), so that a job that takes longer than
/// the lease is not taken over while this worker is alive. A killed worker stops
/// renewing, and after the lease another worker's XAUTOCLAIM takes the job.
class LeaseKeeper {
 public:
  LeaseKeeper(const RedisUrl& url, std::string stream, std::string consumer, std::string id, double lease_seconds)
      : thread_([this, url, stream = std::move(stream), consumer = std::move(consumer), id = std::move(id),
                 period = std::max(0.2, lease_seconds / 3)] {
          try {
            RedisConnection redis = RedisConnection::Connect(url);
            std::unique_lock<std::mutex> lock(mutex_);
            while (!cv_.wait_for(lock, std::chrono::duration<double>(period), [this] { return done_; })) {
              redis.Command({"XCLAIM", stream, kWorkerGroup, consumer, "0", id, "JUSTID"});
            }
          } catch (const std::exception&) {
            // Losing the lease only risks a second run of the job; its result counts once.
          }
        }) {}
  ~LeaseKeeper() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: started after the members it uses
};

/// The job text of a stream entry [id, [field, value, ...]] ("" when deleted).
std::string JobField(const RedisReply& entry) {
  if (entry.elements.size() < 2) return "";
  const auto& fv = entry.elements[1].elements;
  for (size_t i = 0; i + 1 < fv.size(); i += 2) {
    if (fv[i].text == "job") return fv[i + 1].text;
  }
  return "";
}

core::Evaluation Refusal(const std::string& worker_name, const std::string& why) {
  core::Evaluation e;
  e.status = core::Status::kWorkerLost;
  e.message = fmt::format("worker {} refused the job: {}", worker_name, why);
  return e;
}

}  // namespace

std::string WorkerConnectionName(const std::string& target, const std::string& name) {
  std::string text = "ke-worker:" + target + ":" + name;
  for (char& c : text) {
    if (c == ' ' || c == '\n' || c == '\t') c = '_';  // CLIENT SETNAME refuses spaces
  }
  return text;
}

QueueWorker::QueueWorker(QueueWorkerOptions options, platforms::Platform& platform)
    : options_(std::move(options)),
      platform_(platform),
      redis_(RedisConnection::Connect(options_.url, 5, 30)),
      stream_(JobStreamKey(options_.target)) {
  if (options_.name.empty()) options_.name = DefaultName();
  core::MachineContext machine = core::ProbeLocalMachine();
  machine.compiler = platform_.Machine().compiler;
  identity_ = nlohmann::json{{"worker", options_.name}, {"machine", core::MachineToJson(machine)}}.dump();
  EnsureWorkerGroup(redis_, stream_);
  redis_.Command({"CLIENT", "SETNAME", WorkerConnectionName(options_.target, options_.name)});
}

QueueWorker::~QueueWorker() {
  std::error_code ec;  // this process's runner folders (hard links): nothing else reads them
  fs::remove_all(RunnerDir(), ec);
}

fs::path QueueWorker::RunnerDir() const {
  // Per process: workers that share a cache folder (two GPUs, one machine) never
  // rebuild each other's folder while a runner reads it.
  return options_.cache_dir / "queue" / "runner" / std::to_string(::getpid());
}

std::optional<QueueWorker::Message> QueueWorker::ClaimStale() {
  const auto lease_ms = static_cast<int64_t>(options_.lease_seconds * 1000);
  RedisReply r = redis_.CommandOk(
      {"XAUTOCLAIM", stream_, kWorkerGroup, options_.name, std::to_string(lease_ms), "0-0", "COUNT", "1"});
  // [next cursor, [[id, [field, value...]] or nil...], (Redis 7) [deleted ids]]
  if (r.elements.size() < 2) return std::nullopt;
  for (const RedisReply& entry : r.elements[1].elements) {
    if (entry.elements.empty()) continue;
    return Message{entry.elements[0].text, JobField(entry)};
  }
  return std::nullopt;
}

std::optional<QueueWorker::Message> QueueWorker::ReadNew() {
  RedisReply r = redis_.CommandOk(
      {"XREADGROUP", "GROUP", kWorkerGroup, options_.name, "COUNT", "1", "BLOCK", "1000", "STREAMS", stream_, ">"});
  if (r.kind != RedisReply::Kind::kArray || r.elements.empty() || r.elements[0].elements.size() < 2) {
    return std::nullopt;
  }
  for (const RedisReply& entry : r.elements[0].elements[1].elements) {
    if (entry.elements.empty()) continue;
    return Message{entry.elements[0].text, JobField(entry)};
  }
  return std::nullopt;
}

void QueueWorker::Finish(const std::string& message_id) {
  redis_.CommandOk({"XACK", stream_, kWorkerGroup, message_id});
  redis_.CommandOk({"XDEL", stream_, message_id});
}

bool QueueWorker::Reconnect(const std::string& why, const std::atomic<bool>* stop) {
  if (!options_.quiet) {
    fmt::print(stderr, "worker {}: lost Redis {} ({}); reconnecting with backoff\n", options_.name, options_.url.text,
               why);
  }
  double wait = 0.5;
  const auto since = std::chrono::steady_clock::now();
  while (stop == nullptr || !stop->load()) {
    try {
      redis_ = RedisConnection::Connect(options_.url, 5, 30);
      EnsureWorkerGroup(redis_, stream_);  // a restarted server without persistence lost it
      redis_.Command({"CLIENT", "SETNAME", WorkerConnectionName(options_.target, options_.name)});
      if (!options_.quiet) {
        fmt::print(stderr, "worker {}: reconnected to {} after {:.1f} s\n", options_.name, options_.url.text,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count());
      }
      return true;
    } catch (const core::Error& e) {
      if (!options_.quiet) {
        fmt::print(stderr, "worker {}: Redis {} still unreachable ({}); next try in {:.1f} s\n", options_.name,
                   options_.url.text, e.what(), wait);
      }
    }
    // Sleep in short steps so SIGTERM still stops the worker promptly.
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait);
    while (std::chrono::steady_clock::now() < until && (stop == nullptr || !stop->load())) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    wait = std::min(wait * 2, kMaxReconnectWaitSeconds);
  }
  return false;
}

int QueueWorker::Run(const std::atomic<bool>* stop) {
  int answered = 0;
  auto last_job = std::chrono::steady_clock::now();
  while (stop == nullptr || !stop->load()) {
    if (options_.max_jobs > 0 && answered >= options_.max_jobs) break;
    std::optional<Message> message;
    try {
      message = ClaimStale();
      if (!message) message = ReadNew();
    } catch (const core::IoError& e) {
      // Issue 22: Redis restarted or the network dropped: reconnect, do not exit.
      if (!Reconnect(e.what(), stop)) break;
      continue;
    }
    if (!message) {
      const double idle = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_job).count();
      if (options_.idle_exit_seconds > 0 && idle > options_.idle_exit_seconds) break;
      continue;
    }
    try {
      Handle(*message);
    } catch (const core::IoError& e) {
      // The answer could not be posted: the job stays pending here and another worker
      // (or this one) runs it again after the lease (a Redis that restarted lost it).
      if (!Reconnect(e.what(), stop)) break;
      continue;
    }
    ++answered;
    last_job = std::chrono::steady_clock::now();
  }
  return answered;
}

void QueueWorker::Handle(const Message& message) {
  if (message.payload.empty()) {  // deleted while pending
    Finish(message.id);
    return;
  }
  QueueJob job;
  try {
    job = JobFromJson(nlohmann::json::parse(message.payload));
  } catch (const std::exception& e) {
    if (!options_.quiet) fmt::print(stderr, "worker {}: dropped entry {}: {}\n", options_.name, message.id, e.what());
    Finish(message.id);
    return;
  }
  if (job.expires_unix_s > 0 && UnixNow() > job.expires_unix_s) {
    if (!options_.quiet) fmt::print(stderr, "worker {}: job {} expired, dropped\n", options_.name, job.job_id);
    Finish(message.id);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  core::Evaluation evaluation;
  {
    LeaseKeeper lease(options_.url, stream_, options_.name, message.id, options_.lease_seconds);
    try {
      evaluation = Evaluate(job);
    } catch (const std::exception& e) {
      // This machine's fault (disk full, a platform error), not the candidate's: the
      // job is answered, so the search goes on, and the worker serves the next one.
      evaluation = Refusal(options_.name, fmt::format("evaluation failed on this worker: {}", e.what()));
    }
  }
  evaluation.worker = identity_;
  redis_.CommandOk({"XADD", job.reply_stream, "*", "job_id", job.job_id, "worker", options_.name, "result",
                    EvaluationToJson(evaluation).dump()});
  redis_.CommandOk({"EXPIRE", job.reply_stream, std::to_string(7 * 24 * 3600)});
  Finish(message.id);
  if (!options_.quiet) {
    fmt::print(stderr, "worker {}: job {} ({}) -> {}{} in {:.1f} s\n", options_.name, job.job_id,
               job.candidate.template_name.empty() ? job.candidate.operator_name : job.candidate.template_name,
               core::StatusName(evaluation.status),
               evaluation.correct ? fmt::format(", {:.2f}x eager", evaluation.speedup_vs_eager.value) : "",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
}

core::Evaluation QueueWorker::Evaluate(const QueueJob& job) {
  if (job.target != options_.target) {
    return Refusal(options_.name, fmt::format("target {} on a {} worker", job.target, options_.target));
  }
  if (ProblemHash(job.problem) != job.problem.hash) {
    return Refusal(options_.name, fmt::format("problem hash mismatch: the job says {}, its fields hash to {}",
                                              job.problem.hash, ProblemHash(job.problem)));
  }
  LoadedProblem* loaded = nullptr;
  try {
    loaded = &Load(job);
  } catch (const BlobMismatchError& e) {
    return Refusal(options_.name, e.what());
  } catch (const problem::ProblemError& e) {
    return Refusal(options_.name, fmt::format("the problem does not load here: {}", e.what()));
  } catch (const problem::WorkerLostError& e) {
    return Refusal(options_.name, fmt::format("the problem does not load here: {}", e.what()));
  }
  const std::string key = RunOptionsToJson(job.run_options).dump() +
                          fmt::format("|{}|{}|{}", job.eager_min_time_seconds, job.eager_max_time_seconds,
                                      job.eager_flush_cache);
  auto& evaluator = loaded->evaluators[key];
  if (!evaluator) {
    evaluator = std::make_unique<LocalEvaluator>(
        platform_, *loaded->problem, job.run_options,
        options_.platform_paired_eager
            ? options_.platform_paired_eager
            : problem::MakeEagerTimer(*loaded->python, {job.eager_min_time_seconds, job.eager_max_time_seconds,
                                                        job.eager_flush_cache}));
  }
  try {
    return evaluator->Evaluate(job.candidate);
  } catch (const problem::WorkerLostError& e) {
    // The Python worker died timing eager PyTorch: load it afresh for the next job.
    loaded_.erase(job.problem.hash);
    return Refusal(options_.name, fmt::format("the eager timing failed: {}", e.what()));
  }
}

QueueWorker::LoadedProblem& QueueWorker::Load(const QueueJob& job) {
  const fs::path queue_dir = options_.cache_dir / "queue";
  // Fetched (and checked) every job: a changed blob must not slip through a cache.
  const fs::path problem_file = FetchProblemFile(redis_, job.problem, queue_dir);
  const fs::path fixtures = FetchFixtures(redis_, job.problem, queue_dir);
  auto it = loaded_.find(job.problem.hash);
  if (it != loaded_.end()) {
    it->second.last_used = ++uses_;
    return it->second;
  }
  constexpr size_t kMaxLoaded = 2;  // each holds a Python process (pooled: evicted ones serve the next)
  while (loaded_.size() >= kMaxLoaded) {
    auto oldest = loaded_.begin();
    for (auto i = loaded_.begin(); i != loaded_.end(); ++i) {
      if (i->second.last_used < oldest->second.last_used) oldest = i;
    }
    loaded_.erase(oldest);
  }
  problem::WorkerOptions wopts;
  fs::create_directories(options_.log_dir);
  // Per process: workers sharing a cache folder do not write one log.
  wopts.log_path = options_.log_dir / fmt::format("python-{}-{}.log", job.problem.hash, ::getpid());
  wopts.threads = job.problem.threads;
  wopts.omp_wait_policy = job.problem.omp_wait_policy;
  LoadedProblem entry;
  entry.python = problem::WorkerPool::Shared().Take(wopts);  // an evicted problem's worker, if any
  problem::LoadOptions lopts;
  lopts.problem_path = problem_file;
  lopts.overrides = job.problem.overrides;
  lopts.seeds = job.problem.seeds;
  // The worker's own reference run (it also times eager PyTorch here); candidates are
  // checked against the orchestrator's fixtures, the same on every worker.
  lopts.fixtures_dir = queue_dir / "loaded" / job.problem.hash;
  lopts.threads = job.problem.threads;
  lopts.timeout_seconds = job.problem.load_timeout_seconds;
  lopts.baseline.min_time_seconds = job.eager_min_time_seconds;
  lopts.baseline.max_time_seconds = job.eager_max_time_seconds;
  lopts.baseline.flush_cache = job.eager_flush_cache;
  // A GPU runner times eager on the device, paired with each candidate: none on the CPU.
  lopts.time_eager = !options_.platform_paired_eager;
  core::Problem problem = problem::LoadProblem(*entry.python, lopts);
  for (const auto& f : problem.fixture_files) {
    if (!fs::is_regular_file(fixtures / f.filename())) {
      throw BlobMismatchError(fmt::format("the job's fixtures have no {} (this worker's load of the problem makes one)",
                                          f.filename().string()));
    }
  }
  problem.fixtures_dir = fixtures;
  if (options_.platform_paired_eager) {
    problem.fixtures_dir = LinkFixturesForRunner(fixtures, problem_file, RunnerDir() / job.problem.hash);
  }
  for (auto& f : problem.fixture_files) f = problem.fixtures_dir / f.filename();
  entry.problem = std::make_unique<core::Problem>(std::move(problem));
  entry.last_used = ++uses_;
  return loaded_.emplace(job.problem.hash, std::move(entry)).first->second;
}

}  // namespace kernelevolve::exec

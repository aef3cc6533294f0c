#include "exec/queue_evaluator.h"

#include <unistd.h>

#include <chrono>
#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "exec/redis_connection.h"

namespace kernelevolve::exec {
namespace {

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string NewRunKey() {
  std::random_device rd;
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  return core::ContentHash(fmt::format("{}:{}:{}:{}", host, ::getpid(), UnixNow(), rd()));
}

/// Entries of an XREAD reply for one stream: (id, field/value list).
const std::vector<RedisReply>* StreamEntries(const RedisReply& reply) {
  if (reply.kind != RedisReply::Kind::kArray || reply.elements.empty()) return nullptr;
  const RedisReply& stream = reply.elements[0];  // [name, entries]
  if (stream.elements.size() < 2) return nullptr;
  return &stream.elements[1].elements;
}

/// The value of `field` in an entry's field/value list, or nullptr.
const std::string* Field(const RedisReply& entry, const std::string& field) {
  if (entry.elements.size() < 2) return nullptr;
  const auto& fv = entry.elements[1].elements;
  for (size_t i = 0; i + 1 < fv.size(); i += 2) {
    if (fv[i].text == field) return &fv[i + 1].text;
  }
  return nullptr;
}

}  // namespace

void EnsureWorkerGroup(RedisConnection& redis, const std::string& stream) {
  RedisReply r = redis.Command({"XGROUP", "CREATE", stream, kWorkerGroup, "0", "MKSTREAM"});
  if (r.IsError() && r.text.find("BUSYGROUP") == std::string::npos) {
    throw core::IoError(fmt::format("Redis {}: cannot create the consumer group of {}: {}", redis.url().text, stream,
                                    r.text));
  }
}

QueueEvaluator::QueueEvaluator(QueueEvaluatorOptions options) : options_(std::move(options)) {
  run_key_ = NewRunKey();
  result_stream_ = ResultStreamKey(run_key_);
  RedisConnection redis = RedisConnection::Connect(options_.url);
  EnsureWorkerGroup(redis, JobStreamKey(options_.target));
}

core::Evaluation QueueEvaluator::Evaluate(const core::Candidate& candidate) {
  // Blocking reads wait 1 s at a time: the socket timeout must outlast them.
  RedisConnection redis = RedisConnection::Connect(options_.url, 5, 30);
  QueueJob job;
  job.job_id = fmt::format("{}:{}", run_key_, next_job_.fetch_add(1));
  job.reply_stream = result_stream_;
  job.expires_unix_s = UnixNow() + options_.result_timeout_seconds;
  job.target = options_.target;
  job.problem = options_.problem;
  job.candidate = candidate;
  job.run_options = options_.run_options;
  job.eager_min_time_seconds = options_.eager_min_time_seconds;
  job.eager_max_time_seconds = options_.eager_max_time_seconds;
  job.eager_flush_cache = options_.eager_flush_cache;
  const std::string entry_id =
      redis.CommandOk({"XADD", JobStreamKey(options_.target), "*", "job_id", job.job_id, "job", JobToJson(job).dump()})
          .text;

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.result_timeout_seconds);
  std::string last_id = "0-0";
  while (std::chrono::steady_clock::now() < deadline) {
    if (options_.interrupt != nullptr && options_.interrupt->load()) {
      // Deleted while pending in a worker's hands: that worker still answers it (unread);
      // not yet taken: no worker ever sees it.
      redis.Command({"XDEL", JobStreamKey(options_.target), entry_id});
      throw EvaluationInterrupted();
    }
    RedisReply reply = redis.CommandOk({"XREAD", "COUNT", "100", "BLOCK", "1000", "STREAMS", result_stream_, last_id});
    const std::vector<RedisReply>* entries = StreamEntries(reply);
    if (entries == nullptr) continue;
    for (const RedisReply& entry : *entries) {
      if (!entry.elements.empty()) last_id = entry.elements[0].text;
      const std::string* id = Field(entry, "job_id");
      const std::string* result = Field(entry, "result");
      if (id == nullptr || result == nullptr || *id != job.job_id) continue;
      try {
        return EvaluationFromJson(nlohmann::json::parse(*result));
      } catch (const std::exception& e) {
        throw core::IoError(fmt::format("queue {}: the result of job {} is garbled: {}", options_.url.text,
                                        job.job_id, e.what()));
      }
    }
  }
  core::Evaluation lost;
  lost.status = core::Status::kWorkerLost;
  lost.message = fmt::format("no worker returned a result within --queue-timeout {:.0f} s (queue {}, stream {})",
                             options_.result_timeout_seconds, options_.url.text, JobStreamKey(options_.target));
  return lost;
}

}  // namespace kernelevolve::exec

#include "exec/queue_protocol.h"

#include <fmt/format.h>

#include "core/error.h"
#include "eval/result_json.h"

namespace kernelevolve::exec {
namespace {

using nlohmann::json;

json Timing(const core::TimingStats& t) {
  json j = eval::TimingStatsToJson(t);
  j["converged"] = t.converged;
  return j;
}

core::TimingStats TimingFrom(const json& j) {
  core::TimingStats t = eval::TimingStatsFromJson(j);
  t.converged = j.value("converged", false);
  return t;
}

json RooflineToJson(const core::RooflineFigures& r) {
  return {{"bytes_per_call", r.bytes_per_call}, {"flops_per_call", r.flops_per_call},
          {"arithmetic_intensity", r.arithmetic_intensity}, {"achieved_gbps", r.achieved_gbps},
          {"achieved_gflops", r.achieved_gflops}, {"bound", r.bound}, {"fraction", r.fraction}};
}

core::RooflineFigures RooflineFrom(const json& j) {
  core::RooflineFigures r;
  r.bytes_per_call = j.value("bytes_per_call", 0.0);
  r.flops_per_call = j.value("flops_per_call", 0.0);
  r.arithmetic_intensity = j.value("arithmetic_intensity", 0.0);
  r.achieved_gbps = j.value("achieved_gbps", 0.0);
  r.achieved_gflops = j.value("achieved_gflops", 0.0);
  r.bound = j.value("bound", std::string("unknown"));
  r.fraction = j.value("fraction", 0.0);
  return r;
}

}  // namespace

std::string JobStreamKey(const std::string& target) { return "ke:jobs:" + target; }
std::string ResultStreamKey(const std::string& run_key) { return "ke:results:" + run_key; }
std::string BlobKey(const std::string& hash) { return "ke:blob:" + hash; }

std::string FixturesHash(const std::vector<FixtureFile>& files) {
  std::string text;
  for (const auto& f : files) text += fmt::format("{}\t{}\t{}\n", f.name, f.hash, f.bytes);
  return core::ContentHash(text);
}

std::string ProblemHash(const ProblemRef& p) {
  json overrides = p.overrides;
  return core::ContentHash(fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}", p.source_hash, p.file_name, overrides.dump(),
                                       json(p.seeds).dump(), p.threads, p.omp_wait_policy, p.fixtures_hash));
}

json CandidateToJson(const core::Candidate& c) {
  return {{"source", c.source}, {"operator", c.operator_name}, {"template", c.template_name},
          {"knobs", c.knobs},   {"rationale", c.rationale}};
}

core::Candidate CandidateFromJson(const json& j) {
  core::Candidate c;
  c.source = j.at("source").get<std::string>();
  c.operator_name = j.value("operator", "");
  c.template_name = j.value("template", "");
  c.knobs = j.value("knobs", json::object());
  c.rationale = j.value("rationale", "");
  return c;
}

json RunOptionsToJson(const platforms::RunOptions& o) {
  return {{"warmup_seconds", o.warmup_seconds},     {"min_time_seconds", o.min_time_seconds},
          {"min_repetitions", o.min_repetitions},   {"max_repetitions", o.max_repetitions},
          {"max_time_seconds", o.max_time_seconds}, {"flush_cache", o.flush_cache},
          {"timeout_seconds", o.timeout_seconds},   {"memory_limit_bytes", o.memory_limit_bytes},
          {"threads", o.threads},                   {"omp_wait_policy", o.omp_wait_policy},
          {"measure", o.measure},                   {"time_kernel_only", o.time_kernel_only}};
}

platforms::RunOptions RunOptionsFromJson(const json& j) {
  platforms::RunOptions o;
  o.warmup_seconds = j.at("warmup_seconds").get<double>();
  o.min_time_seconds = j.at("min_time_seconds").get<double>();
  o.min_repetitions = j.at("min_repetitions").get<int>();
  o.max_repetitions = j.at("max_repetitions").get<int>();
  o.max_time_seconds = j.at("max_time_seconds").get<double>();
  o.flush_cache = j.at("flush_cache").get<bool>();
  o.timeout_seconds = j.at("timeout_seconds").get<double>();
  o.memory_limit_bytes = j.at("memory_limit_bytes").get<int64_t>();
  o.threads = j.at("threads").get<int>();
  o.omp_wait_policy = j.at("omp_wait_policy").get<std::string>();
  o.time_kernel_only = j.value("time_kernel_only", true);  // absent from older workers' jobs
  o.measure = j.at("measure").get<bool>();
  return o;
}

json EvaluationToJson(const core::Evaluation& e) {
  json checks = json::array();
  for (const auto& c : e.checks) {
    json jc = eval::OutputCheckToJson(c);
    jc["edge_case"] = c.edge_case;
    checks.push_back(jc);
  }
  return {{"status", std::string(core::StatusName(e.status))},
          {"message", e.message},
          {"log_excerpt", e.log_excerpt},
          {"correct", e.correct},
          {"checks", checks},
          {"latency", Timing(e.latency)},
          {"kernel_only", Timing(e.kernel_only)},
          {"paired_baseline", Timing(e.paired_baseline)},
          {"speedup", {{"value", e.speedup_vs_eager.value}, {"ci_low", e.speedup_vs_eager.ci_low},
                       {"ci_high", e.speedup_vs_eager.ci_high}}},
          {"fitness", e.fitness},
          {"build_seconds", e.build_seconds},
          {"run_seconds", e.run_seconds},
          {"build_cache_hit", e.build_cache_hit},
          {"roofline", RooflineToJson(e.roofline)},
          {"worker", e.worker}};
}

core::Evaluation EvaluationFromJson(const json& j) {
  core::Evaluation e;
  e.status = core::StatusFromName(j.at("status").get<std::string>());
  e.message = j.at("message").get<std::string>();
  e.log_excerpt = j.value("log_excerpt", "");
  e.correct = j.at("correct").get<bool>();
  for (const auto& jc : j.at("checks")) {
    core::OutputCheck c = eval::OutputCheckFromJson(jc);
    c.edge_case = jc.value("edge_case", "");
    e.checks.push_back(c);
  }
  e.latency = TimingFrom(j.at("latency"));
  e.kernel_only = TimingFrom(j.at("kernel_only"));
  e.paired_baseline = TimingFrom(j.at("paired_baseline"));
  const json& s = j.at("speedup");
  e.speedup_vs_eager = {s.value("value", 0.0), s.value("ci_low", 0.0), s.value("ci_high", 0.0)};
  e.fitness = j.at("fitness").get<double>();
  e.build_seconds = j.value("build_seconds", 0.0);
  e.run_seconds = j.value("run_seconds", 0.0);
  e.build_cache_hit = j.value("build_cache_hit", false);
  e.roofline = RooflineFrom(j.value("roofline", json::object()));
  e.worker = j.value("worker", "");
  return e;
}

json JobToJson(const QueueJob& job) {
  json fixtures = json::array();
  for (const auto& f : job.problem.fixtures) fixtures.push_back({{"name", f.name}, {"hash", f.hash}, {"bytes", f.bytes}});
  const ProblemRef& p = job.problem;
  return {{"job_id", job.job_id},
          {"reply_stream", job.reply_stream},
          {"expires_unix_s", job.expires_unix_s},
          {"target", job.target},
          {"problem",
           {{"file_name", p.file_name}, {"source_hash", p.source_hash}, {"overrides", p.overrides},
            {"seeds", p.seeds}, {"threads", p.threads}, {"omp_wait_policy", p.omp_wait_policy},
            {"load_timeout_seconds", p.load_timeout_seconds}, {"fixtures", fixtures},
            {"fixtures_hash", p.fixtures_hash}, {"hash", p.hash}}},
          {"candidate", CandidateToJson(job.candidate)},
          {"run_options", RunOptionsToJson(job.run_options)},
          {"eager", {{"min_time_seconds", job.eager_min_time_seconds},
                     {"max_time_seconds", job.eager_max_time_seconds},
                     {"flush_cache", job.eager_flush_cache}}}};
}

QueueJob JobFromJson(const json& doc) {
  try {
    QueueJob job;
    job.job_id = doc.at("job_id").get<std::string>();
    job.reply_stream = doc.at("reply_stream").get<std::string>();
    job.expires_unix_s = doc.at("expires_unix_s").get<double>();
    job.target = doc.at("target").get<std::string>();
    const json& p = doc.at("problem");
    job.problem.file_name = p.at("file_name").get<std::string>();
    job.problem.source_hash = p.at("source_hash").get<std::string>();
    job.problem.overrides = p.at("overrides").get<std::map<std::string, std::string>>();
    job.problem.seeds = p.at("seeds").get<std::vector<int>>();
    job.problem.threads = p.at("threads").get<int>();
    job.problem.omp_wait_policy = p.at("omp_wait_policy").get<std::string>();
    job.problem.load_timeout_seconds = p.at("load_timeout_seconds").get<double>();
    for (const auto& f : p.at("fixtures")) {
      job.problem.fixtures.push_back(
          {f.at("name").get<std::string>(), f.at("hash").get<std::string>(), f.at("bytes").get<int64_t>()});
    }
    job.problem.fixtures_hash = p.at("fixtures_hash").get<std::string>();
    job.problem.hash = p.at("hash").get<std::string>();
    job.candidate = CandidateFromJson(doc.at("candidate"));
    job.run_options = RunOptionsFromJson(doc.at("run_options"));
    const json& e = doc.at("eager");
    job.eager_min_time_seconds = e.at("min_time_seconds").get<double>();
    job.eager_max_time_seconds = e.at("max_time_seconds").get<double>();
    job.eager_flush_cache = e.at("flush_cache").get<bool>();
    return job;
  } catch (const json::exception& e) {
    throw core::InvalidInputError(fmt::format("not an evaluation job: {}", e.what()));
  }
}

}  // namespace kernelevolve::exec

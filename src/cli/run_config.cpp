#include "cli/run_config.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/candidate.h"
#include "core/error.h"
#include "exec/measurement_gate.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

/// Config format version; 1 is the walking skeleton's (no resume information).
constexpr int kConfigVersion = 2;

std::string Absolute(const fs::path& path) {
  return path.empty() ? "" : fs::absolute(path).lexically_normal().string();
}

void Require(bool ok, const std::string& message) {
  if (!ok) throw core::InvalidInputError(message);
}

}  // namespace

void ValidateSearchFlags(const OptimizeOptions& o) {
  search::MakePolicy(o.policy, MakePolicyOptions(o));  // names the flag when wrong
  search::ContextModeFromName(o.context);
  exec::TimingIsolationFromName(o.timing_isolation);
  Require(o.jobs >= 1, "--jobs must be at least 1");
  Require(o.stall >= 0, "--stall must be 0 (off) or a number of evaluations");
  Require(o.stall_min_improvement_pct >= 0, "--stall-min-improvement must be a percentage >= 0");
  Require(o.target_speedup >= 0, "--target-speedup must be 0 (off) or a speedup > 0");
  Require(o.drafts >= 0, "--drafts must be 0 (automatic) or a count");
  Require(o.islands >= 1, "--islands must be at least 1");
  Require(o.migration_interval >= 1, "--migration-interval must be at least 1");
}

search::PolicyOptions MakePolicyOptions(const OptimizeOptions& o) {
  search::PolicyOptions p;
  p.seed = o.seed;
  p.ucb_c = o.ucb_c;
  p.islands = o.islands;
  p.migration_interval = o.migration_interval;
  return p;
}

search::SearchOptions MakeSearchOptions(const OptimizeOptions& o) {
  search::SearchOptions s;
  s.termination.budget = o.budget;
  s.termination.time_limit_seconds = o.time_limit_seconds;
  s.termination.stall_evaluations = o.stall;
  s.termination.stall_min_improvement = o.stall_min_improvement_pct / 100.0;
  s.termination.target_speedup = o.target_speedup;
  s.drafts = o.drafts;
  s.threads = o.threads;
  s.jobs = o.jobs;
  s.context = search::ContextModeFromName(o.context);
  s.clean_slate_after = o.clean_slate_after;
  return s;
}

nlohmann::json OptionsToConfig(const OptimizeOptions& o,
                               const std::map<std::string, std::string>& overrides) {
  return {{"config_version", kConfigVersion},
          {"problem_path", o.problem_path.string()},
          {"problem_path_abs", Absolute(o.problem_path)},
          // resume refuses an edited problem (CheckProblemUnchanged); "" when unreadable.
          {"problem_hash", core::FileContentHash(o.problem_path)},
          {"target", o.target},
          {"budget", o.budget},
          {"time_limit_seconds", o.time_limit_seconds},
          {"sets", o.sets},
          {"overrides", overrides},
          {"threads", o.threads},
          {"seeds", o.seeds},
          {"drafts", o.drafts},
          {"policy", o.policy},
          {"confirm_rounds", o.confirm_rounds},
          {"min_time_seconds", o.min_time_seconds},
          {"max_time_seconds", o.max_time_seconds},
          {"cache_flush", o.cache_flush},
          {"candidate_timeout_seconds", o.candidate_timeout_seconds},
          {"candidate_memory_mb", o.candidate_memory_mb},
          {"cache_dir", Absolute(o.cache_dir)},
          {"kb_path", Absolute(o.kb_path)},
          {"no_kb", o.no_kb},
          {"jobs", o.jobs},
          {"queue", o.queue},  // issue 22: a resumed run goes through the same queue
          {"queue_timeout_seconds", o.queue_timeout_seconds},
          {"seed", o.seed},
          {"ucb_c", o.ucb_c},
          {"islands", o.islands},
          {"migration_interval", o.migration_interval},
          {"stall", o.stall},
          {"stall_min_improvement_pct", o.stall_min_improvement_pct},
          {"target_speedup", o.target_speedup},
          {"context", o.context},
          {"clean_slate_after", o.clean_slate_after},
          {"timing_isolation", o.timing_isolation},
          {"omp_wait_policy", o.omp_wait_policy},
          {"fixtures", o.fixtures},
          {"load_timeout_seconds", o.load_timeout_seconds},
          // GPU profiling (issue 6); older configs lack them: the defaults.
          {"profile_top", o.profile_top},
          {"profile_during", o.profile_during},
          {"profile_timeout_seconds", o.profile_timeout_seconds},
          // LLM operator (issue 7); older configs lack them: template operator.
          {"llm", o.llm},
          {"llm_base_urls", o.llm_base_urls},
          {"max_cost_usd", o.max_cost_usd},
          {"llm_timeout_seconds", o.llm_timeout_seconds},
          {"llm_retries", o.llm_retries},
          {"llm_max_tokens", o.llm_max_tokens},
          {"llm_temperature", o.llm_temperature},
          {"llm_prices", Absolute(o.llm_prices)},
          {"llm_prompts", Absolute(o.llm_prompts)}};
}

OptimizeOptions OptionsFromRun(const store::RunRecord& run) {
  const nlohmann::json& c = run.config;
  if (!c.is_object() || c.value("config_version", 1) < kConfigVersion) {
    throw core::InvalidInputError(fmt::format(
        "run {}: runs.config_json does not record the flags needed to resume (started by an "
        "older kernelevolve); start a new run with `kernelevolve optimize`",
        run.id));
  }
  OptimizeOptions o;
  try {
    o.problem_path = c.at("problem_path_abs").get<std::string>();
    o.target = c.at("target").get<std::string>();
    o.budget = c.at("budget").get<int>();
    o.time_limit_seconds = c.at("time_limit_seconds").get<double>();
    o.sets = c.at("sets").get<std::vector<std::string>>();
    o.threads = c.at("threads").get<int>();
    o.seeds = c.at("seeds").get<int>();
    o.drafts = c.at("drafts").get<int>();
    o.policy = c.at("policy").get<std::string>();
    o.confirm_rounds = c.at("confirm_rounds").get<int>();
    o.min_time_seconds = c.at("min_time_seconds").get<double>();
    o.max_time_seconds = c.value("max_time_seconds", o.max_time_seconds);  // absent before issue 4
    o.cache_flush = c.value("cache_flush", false);
    o.candidate_timeout_seconds = c.at("candidate_timeout_seconds").get<double>();
    o.candidate_memory_mb = c.at("candidate_memory_mb").get<int64_t>();
    o.cache_dir = c.at("cache_dir").get<std::string>();
    o.kb_path = c.at("kb_path").get<std::string>();
    o.no_kb = c.at("no_kb").get<bool>();
    o.jobs = c.at("jobs").get<int>();
    o.queue = c.value("queue", std::string());  // absent before issue 22
    o.queue_timeout_seconds = c.value("queue_timeout_seconds", o.queue_timeout_seconds);
    o.seed = c.at("seed").get<uint64_t>();
    o.ucb_c = c.at("ucb_c").get<double>();
    o.islands = c.at("islands").get<int>();
    o.migration_interval = c.at("migration_interval").get<int>();
    o.stall = c.at("stall").get<int>();
    o.stall_min_improvement_pct = c.at("stall_min_improvement_pct").get<double>();
    o.target_speedup = c.at("target_speedup").get<double>();
    o.context = c.at("context").get<std::string>();
    o.clean_slate_after = c.at("clean_slate_after").get<int>();
    o.timing_isolation = c.at("timing_isolation").get<std::string>();
    o.omp_wait_policy = c.value("omp_wait_policy", std::string());
    o.fixtures = c.value("fixtures", std::string());  // "" in runs from before the flag: KE_FIXTURES
    o.load_timeout_seconds = c.value("load_timeout_seconds", 300.0);
    o.profile_top = c.value("profile_top", -1);
    o.profile_during = c.value("profile_during", -1);
    o.profile_timeout_seconds = c.value("profile_timeout_seconds", 240.0);
    o.llm = c.value("llm", std::vector<std::string>());
    o.llm_base_urls = c.value("llm_base_urls", std::vector<std::string>());
    o.max_cost_usd = c.value("max_cost_usd", 0.0);
    o.llm_timeout_seconds = c.value("llm_timeout_seconds", 300.0);
    o.llm_retries = c.value("llm_retries", 6);
    o.llm_max_tokens = c.value("llm_max_tokens", 8192);
    o.llm_temperature = c.value("llm_temperature", -1.0);
    o.llm_prices = c.value("llm_prices", std::string());
    o.llm_prompts = c.value("llm_prompts", std::string());
  } catch (const nlohmann::json::exception& e) {
    throw core::InvalidInputError(
        fmt::format("run {}: runs.config_json is incomplete or malformed: {}", run.id, e.what()));
  }
  return o;
}

std::string CheckProblemUnchanged(const store::RunRecord& run, const OptimizeOptions& o) {
  const std::string then = run.config.is_object() ? run.config.value("problem_hash", std::string()) : "";
  if (then.empty()) {
    return fmt::format("warning: run {} recorded no hash of {} (started by an older kernelevolve): "
                       "cannot check that the file is unchanged since the run started",
                       run.id, o.problem_path.string());
  }
  const std::string now = core::FileContentHash(o.problem_path);
  if (now == then) return "";
  std::string command = "kernelevolve optimize " + o.problem_path.string() + " --target " + o.target;
  for (const auto& set : o.sets) command += " --set " + set;
  throw core::InvalidInputError(fmt::format(
      "{} changed since the run started (hash {} then, {} now): run {}'s nodes were timed on "
      "the old problem; start a new run with `{} --out NEW_DIR`",
      o.problem_path.string(), then, now.empty() ? "unreadable" : now, run.id,
      command));
}

}  // namespace kernelevolve::cli

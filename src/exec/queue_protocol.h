// What travels through the evaluation queue (issue 22): Redis key names, and jobs and
// results as JSON (one stream entry field each). docs/scale.md describes the protocol.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "core/evaluation.h"
#include "platforms/platform.h"

namespace kernelevolve::exec {

/// The consumer group every worker of a target reads jobs through.
inline constexpr const char* kWorkerGroup = "workers";
/// Stream of evaluation jobs for `target` ("cpu", "triton", "cuda").
std::string JobStreamKey(const std::string& target);
/// Stream a run's results come back on; `run_key` is unique per orchestrating process.
std::string ResultStreamKey(const std::string& run_key);
/// A content-addressed blob (problem file, fixture file): ke:blob:<ContentHash>.
std::string BlobKey(const std::string& hash);

/// One file of a problem's fixtures, by content.
struct FixtureFile {
  std::string name;   // file name inside the fixtures folder ("manifest.json", "seed_0.safetensors")
  std::string hash;   // core::ContentHash of its bytes: the blob's key
  int64_t bytes = 0;
};

/// The problem a job belongs to, as the worker needs it to load the reference (for the
/// paired eager timing) and to find the fixtures.
struct ProblemRef {
  std::string file_name;                        // "relu.py": the problem's name is its stem
  std::string source_hash;                      // blob of the problem file's bytes
  std::map<std::string, std::string> overrides; // --set
  std::vector<int> seeds;
  int threads = 1;
  std::string omp_wait_policy;
  double load_timeout_seconds = 300;
  std::vector<FixtureFile> fixtures;
  std::string fixtures_hash;  // FixturesHash(fixtures)
  std::string hash;           // ProblemHash(*this): what a worker checks before running
};

/// ContentHash over the files' names and hashes, in order.
std::string FixturesHash(const std::vector<FixtureFile>& files);
/// ContentHash over the file hash, name, overrides, seeds, threads and fixtures hash.
std::string ProblemHash(const ProblemRef& problem);

/// One evaluation to run: a candidate of a problem, with how to measure it.
struct QueueJob {
  std::string job_id;       // "<run key>:<n>", unique
  std::string reply_stream; // ResultStreamKey of the run
  double expires_unix_s = 0;  // a worker drops a job it takes after this time
  std::string target;
  ProblemRef problem;
  core::Candidate candidate;
  platforms::RunOptions run_options;
  double eager_min_time_seconds = 0.2;  // the paired eager timing (problem/eager_timer.h)
  double eager_max_time_seconds = 2.0;
  bool eager_flush_cache = false;
};

nlohmann::json JobToJson(const QueueJob& job);
/// Throws core::InvalidInputError naming the field when `doc` is not a job.
QueueJob JobFromJson(const nlohmann::json& doc);

nlohmann::json CandidateToJson(const core::Candidate& candidate);
core::Candidate CandidateFromJson(const nlohmann::json& doc);
nlohmann::json RunOptionsToJson(const platforms::RunOptions& options);
platforms::RunOptions RunOptionsFromJson(const nlohmann::json& doc);
/// Every field of core::Evaluation (timings, checks, roofline, worker).
nlohmann::json EvaluationToJson(const core::Evaluation& evaluation);
core::Evaluation EvaluationFromJson(const nlohmann::json& doc);

}  // namespace kernelevolve::exec

// Shared pieces of the search tests: a fake problem, a scripted landscape over the
// FakeOperator's grid, and a one-call fake search on a real SQLite store.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "exec/fake_operator.h"
#include "exec/fake_platform.h"
#include "exec/local_evaluator.h"
#include "exec/measurement_gate.h"
#include "search/search_loop.h"
#include "search/selection_policy.h"
#include "store/store.h"

namespace kernelevolve::testing_util {

namespace fs = std::filesystem;

/// A problem whose eager baseline takes 100 us (every statistic): fitness is about
/// 100 / scripted latency, whichever statistic eval::ScoreEvaluation compares.
inline core::Problem FakeProblem() {
  core::Problem problem;
  problem.name = "fake";
  core::TimingStats& b = problem.eager_baseline;
  b.n = 20;
  b.median_us = b.mean_us = b.min_us = b.p10_us = 100;
  b.p90_us = b.max_us = 101;
  b.ci_low_us = 99;
  b.ci_high_us = 101;
  return problem;
}

/// A correct evaluation of fitness `fitness` against FakeProblem()'s 100 us baseline:
/// median latency 100 / fitness us over 10 runs, speedup `fitness` with the confidence
/// interval [fitness * ci_low_factor, fitness * ci_high_factor].
inline core::Evaluation OkEvaluation(double fitness, double ci_low_factor, double ci_high_factor) {
  core::Evaluation e;
  e.status = core::Status::kOk;
  e.correct = true;
  e.latency.n = 10;
  e.latency.median_us = 100.0 / fitness;
  e.speedup_vs_eager = {fitness, fitness * ci_low_factor, fitness * ci_high_factor};
  e.fitness = fitness;
  return e;
}

/// Latency falls as the knobs grow, with a few failing corners: sum % 7 == 3 does not
/// compile, sum % 11 == 5 is incorrect, sum % 13 == 8 crashes.
inline exec::FakeOutcome GridLandscape(const core::Candidate& c) {
  const std::vector<int> p = exec::FakeOperator::Point(c);
  int sum = 0;
  double speed = 0.5;
  for (size_t d = 0; d < p.size(); ++d) {
    sum += p[d];
    speed += (0.3 / static_cast<double>(d + 1)) * p[d];
  }
  if (sum % 7 == 3) return {core::Status::kCompileError, 0};
  if (sum % 11 == 5) return {core::Status::kIncorrect, 0};
  if (sum % 13 == 8) return {core::Status::kCrash, 0};
  return {core::Status::kOk, 100.0 / speed};
}

/// Throws std::runtime_error on its `crash_at`-th call (1-based), as a process killed
/// in the middle of an evaluation would stop; otherwise forwards.
class CrashingEvaluator : public exec::Evaluator {
 public:
  CrashingEvaluator(exec::Evaluator& inner, int crash_at) : inner_(inner), crash_at_(crash_at) {}
  core::Evaluation Evaluate(const core::Candidate& c) override {
    if (++calls_ == crash_at_) throw std::runtime_error("simulated crash");
    return inner_.Evaluate(c);
  }

 private:
  exec::Evaluator& inner_;
  int crash_at_;
  std::atomic<int> calls_{0};
};

/// Forwards to a real policy but throws from its `crash_at`-th Notify: a crash in the
/// middle of the commit transaction.
class CrashingPolicy : public search::SelectionPolicy {
 public:
  CrashingPolicy(std::unique_ptr<search::SelectionPolicy> inner, int crash_at)
      : inner_(std::move(inner)), crash_at_(crash_at) {}
  std::string Name() const override { return inner_->Name(); }
  std::vector<int64_t> Select(const search::Tree& t, int k) override { return inner_->Select(t, k); }
  void Notify(search::Tree& t, const search::Node& n) override {
    if (++notified_ == crash_at_) throw std::runtime_error("simulated crash in commit");
    inner_->Notify(t, n);
  }
  void OnExhausted(int64_t id) override { inner_->OnExhausted(id); }
  nlohmann::json SaveState() const override { return inner_->SaveState(); }
  void RestoreState(search::Tree& t, const nlohmann::json& s) override { inner_->RestoreState(t, s); }

 private:
  std::unique_ptr<search::SelectionPolicy> inner_;
  int crash_at_;
  int notified_ = 0;
};

/// Everything one fake search needs; Run() may be called again on the same store (a
/// resume) after a crash.
struct FakeSearch {
  std::string policy = "greedy";
  uint64_t seed = 1;
  int budget = 30;
  int jobs = 1;
  int dims = 3;
  int values = 6;
  double noise = 0.05;
  int eval_crash_at = 0;    // CrashingEvaluator when > 0
  int notify_crash_at = 0;  // CrashingPolicy when > 0
  search::SearchOptions options;
  exec::FakePlatformOptions platform_options;
  std::function<exec::FakeOutcome(const core::Candidate&)> script = GridLandscape;

  /// Runs (or resumes) the search of run 1 in `db`, creating the run when absent.
  search::SearchOutcome Run(const fs::path& db) {
    auto store = store::Store::Open(db);
    int64_t run_id = 1;
    if (store.ListRuns().empty()) run_id = store.CreateRun(store::RunRecord{});
    core::Problem problem = FakeProblem();
    exec::FakeOperator op(dims, values);
    exec::FakePlatformOptions po = platform_options;
    po.noise = noise;
    po.seed = seed;
    exec::FakePlatform platform(script, po);
    exec::MeasurementGate gate;
    exec::GatedPlatform gated(platform, gate);
    exec::LocalEvaluator local(gated, problem, platforms::RunOptions{});
    CrashingEvaluator crashing(local, eval_crash_at);
    exec::Evaluator& evaluator = eval_crash_at > 0 ? static_cast<exec::Evaluator&>(crashing) : local;
    search::PolicyOptions popts;
    popts.seed = seed;
    std::unique_ptr<search::SelectionPolicy> policy = search::MakePolicy(this->policy, popts);
    if (notify_crash_at > 0) {
      policy = std::make_unique<CrashingPolicy>(std::move(policy), notify_crash_at);
    }
    search::SearchOptions o = options;
    o.termination.budget = budget;
    o.jobs = jobs;
    search::SearchLoop loop(problem, op, *policy, evaluator, store, run_id, o);
    search::SearchOutcome outcome = loop.Run();
    peak_runs = platform.peak_concurrent_runs();
    peak_builds = platform.peak_concurrent_builds();
    overlaps = platform.build_run_overlaps();
    return outcome;
  }
  int peak_runs = 0;
  int peak_builds = 0;
  int overlaps = 0;
};

/// (id, parent, source hash, fitness) of every node of run 1, in id order.
inline std::vector<std::string> TreeSignature(const fs::path& db) {
  auto store = store::Store::Open(db);
  std::vector<std::string> out;
  for (const auto& n : store.LoadNodes(1)) {
    out.push_back(fmt::format("{} <- {} {} {:.6f}", n.id, n.parent_id, n.source_hash,
                              n.evaluation.fitness));
  }
  return out;
}

/// A fresh temporary folder per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ke_search_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

}  // namespace kernelevolve::testing_util

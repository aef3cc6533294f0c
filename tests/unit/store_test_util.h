// Shared fixture and builders for the store unit tests (store_test.cpp, store_file_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "search/node.h"
#include "store/store.h"

namespace kernelevolve::store::testing {

/// One fresh temporary directory per test (removed afterwards); db_path_ lies inside it.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ke_store_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_path_ = dir_ / "kernelevolve.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::filesystem::path db_path_;
};

inline RunRecord SampleRun() {
  RunRecord run;
  run.problem = "softmax";
  run.problem_path = "problems/level1/softmax.py";
  run.target = "cpu";
  run.config = {{"budget", 40}, {"policy", "ucb1"}, {"seed", 7}};
  run.machine = {{"cpu_model", "Test CPU @ 3.0GHz"}, {"logical_cores", 2}};
  run.started_unix_s = 1700000000.25;
  return run;
}

inline core::TimingStats Timing(double base) {
  core::TimingStats t;
  t.n = static_cast<int64_t>(base) + 30;
  t.median_us = base;
  t.mean_us = base + 0.5;
  t.stdev_us = 0.25;
  t.min_us = base - 1;
  t.max_us = base + 3;
  t.p10_us = base - 0.75;
  t.p90_us = base + 2;
  t.ci_low_us = base - 0.125;
  t.ci_high_us = base + 0.375;
  return t;
}

/// A node with every field set to a distinct value.
inline search::Node MakeNode(int64_t parent_id, int depth, double fitness, bool correct,
                             const std::string& tag) {
  search::Node node;
  node.parent_id = parent_id;
  node.depth = depth;
  node.candidate.source = "// kernel " + tag + "\nextern \"C\" int ke_kernel() { return 0; }\n";
  node.candidate.operator_name = "template";
  node.candidate.template_name = "softmax_lastdim";
  node.candidate.knobs = {{"tile", 64}, {"unroll", 4}, {"vectorize", true}, {"tag", tag}};
  node.candidate.rationale = "rationale " + tag;
  node.source_hash = core::ContentHash(node.candidate.source);
  node.created_unix_s = 1700000100.5 + depth;
  core::Evaluation& e = node.evaluation;
  e.status = correct ? core::Status::kOk : core::Status::kIncorrect;
  e.message = correct ? "ok" : "output.0 differs at index 3";
  e.log_excerpt = "g++ -O3 ... " + tag;
  e.correct = correct;
  e.fitness = fitness;
  e.speedup_vs_eager = {fitness, fitness * 0.9, fitness * 1.1};
  e.latency = Timing(100 + depth);
  e.kernel_only = Timing(80 + depth);
  e.build_seconds = 0.375;
  e.run_seconds = 1.5;
  e.build_cache_hit = depth % 2 == 0;
  core::OutputCheck check;
  check.seed_index = 1;
  check.output = "output.0";
  check.passed = correct;
  check.max_abs_error = 1.5e-6;
  check.max_rel_error = 2.5e-5;
  check.mismatches = correct ? 0 : 12;
  check.first_mismatch = correct ? -1 : 3;
  check.atol = 1e-5;
  check.rtol = 1e-4;
  check.note = correct ? "" : "values differ";
  e.checks = {check, check};
  e.checks[1].seed_index = 2;
  e.checks[1].output = "output.1";
  return node;
}

inline void ExpectDoubleEqOrBothNan(double a, double b, const char* field) {
  if (std::isnan(a) || std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << field << ": " << a << " vs " << b;
  } else {
    EXPECT_EQ(a, b) << field;
  }
}

inline void ExpectTimingEq(const core::TimingStats& a, const core::TimingStats& b) {
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.median_us, b.median_us);
  EXPECT_EQ(a.mean_us, b.mean_us);
  EXPECT_EQ(a.stdev_us, b.stdev_us);
  EXPECT_EQ(a.min_us, b.min_us);
  EXPECT_EQ(a.max_us, b.max_us);
  EXPECT_EQ(a.p10_us, b.p10_us);
  EXPECT_EQ(a.p90_us, b.p90_us);
  EXPECT_EQ(a.ci_low_us, b.ci_low_us);
  EXPECT_EQ(a.ci_high_us, b.ci_high_us);
}

inline void ExpectNodeEq(const search::Node& a, const search::Node& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.parent_id, b.parent_id);
  EXPECT_EQ(a.depth, b.depth);
  EXPECT_EQ(a.candidate.source, b.candidate.source);
  EXPECT_EQ(a.candidate.operator_name, b.candidate.operator_name);
  EXPECT_EQ(a.candidate.template_name, b.candidate.template_name);
  EXPECT_EQ(a.candidate.knobs, b.candidate.knobs);
  EXPECT_EQ(a.candidate.rationale, b.candidate.rationale);
  EXPECT_EQ(a.source_hash, b.source_hash);
  EXPECT_EQ(a.created_unix_s, b.created_unix_s);
  const core::Evaluation& x = a.evaluation;
  const core::Evaluation& y = b.evaluation;
  EXPECT_EQ(x.status, y.status);
  EXPECT_EQ(x.message, y.message);
  EXPECT_EQ(x.log_excerpt, y.log_excerpt);
  EXPECT_EQ(x.correct, y.correct);
  EXPECT_EQ(x.fitness, y.fitness);
  EXPECT_EQ(x.speedup_vs_eager.value, y.speedup_vs_eager.value);
  EXPECT_EQ(x.speedup_vs_eager.ci_low, y.speedup_vs_eager.ci_low);
  EXPECT_EQ(x.speedup_vs_eager.ci_high, y.speedup_vs_eager.ci_high);
  ExpectTimingEq(x.latency, y.latency);
  ExpectTimingEq(x.kernel_only, y.kernel_only);
  EXPECT_EQ(x.build_seconds, y.build_seconds);
  EXPECT_EQ(x.run_seconds, y.run_seconds);
  EXPECT_EQ(x.build_cache_hit, y.build_cache_hit);
  ASSERT_EQ(x.checks.size(), y.checks.size());
  for (size_t i = 0; i < x.checks.size(); ++i) {
    const core::OutputCheck& c = x.checks[i];
    const core::OutputCheck& d = y.checks[i];
    EXPECT_EQ(c.seed_index, d.seed_index);
    EXPECT_EQ(c.output, d.output);
    EXPECT_EQ(c.passed, d.passed);
    ExpectDoubleEqOrBothNan(c.max_abs_error, d.max_abs_error, "max_abs_error");
    ExpectDoubleEqOrBothNan(c.max_rel_error, d.max_rel_error, "max_rel_error");
    EXPECT_EQ(c.mismatches, d.mismatches);
    EXPECT_EQ(c.first_mismatch, d.first_mismatch);
    EXPECT_EQ(c.atol, d.atol);
    EXPECT_EQ(c.rtol, d.rtol);
    EXPECT_EQ(c.note, d.note);
  }
}

inline std::vector<int64_t> Ids(const std::vector<search::Node>& nodes) {
  std::vector<int64_t> ids;
  for (const auto& node : nodes) ids.push_back(node.id);
  return ids;
}

}  // namespace kernelevolve::store::testing

// The search flags stored for resume, and the compare command's table.
#include <gtest/gtest.h>

#include "cli/compare_command.h"
#include "cli/run_config.h"
#include "core/error.h"

namespace kernelevolve::cli {
namespace {

TEST(RunConfigTest, StoredFlagsGiveBackTheSameOptions) {
  OptimizeOptions o;
  o.problem_path = "problems/level1/softmax.py";
  o.budget = 12;
  o.sets = {"batch_size=32", "dim=512"};
  o.threads = 2;
  o.policy = "evolutionary";
  o.jobs = 3;
  o.seed = 99;
  o.islands = 4;
  o.migration_interval = 2;
  o.stall = 7;
  o.stall_min_improvement_pct = 2.5;
  o.target_speedup = 3;
  o.context = "inherit";
  o.clean_slate_after = -1;
  o.timing_isolation = "runs-only";
  o.min_time_seconds = 0.02;
  o.cache_dir = "/tmp/cache";
  store::RunRecord run;
  run.id = 1;
  run.config = OptionsToConfig(o, {{"batch_size", "32"}});
  OptimizeOptions back = OptionsFromRun(run);
  EXPECT_TRUE(back.problem_path.is_absolute());
  EXPECT_EQ(back.problem_path.filename(), "softmax.py");
  EXPECT_EQ(back.budget, 12);
  EXPECT_EQ(back.sets, o.sets);
  EXPECT_EQ(back.policy, "evolutionary");
  EXPECT_EQ(back.jobs, 3);
  EXPECT_EQ(back.seed, 99u);
  EXPECT_EQ(back.islands, 4);
  EXPECT_EQ(back.migration_interval, 2);
  EXPECT_EQ(back.stall, 7);
  EXPECT_DOUBLE_EQ(back.stall_min_improvement_pct, 2.5);
  EXPECT_DOUBLE_EQ(back.target_speedup, 3);
  EXPECT_EQ(back.context, "inherit");
  EXPECT_EQ(back.clean_slate_after, -1);
  EXPECT_EQ(back.timing_isolation, "runs-only");
  EXPECT_DOUBLE_EQ(back.min_time_seconds, 0.02);
  EXPECT_EQ(back.cache_dir, "/tmp/cache");

  auto s = MakeSearchOptions(back);
  EXPECT_EQ(s.termination.stall_evaluations, 7);
  EXPECT_DOUBLE_EQ(s.termination.stall_min_improvement, 0.025);
  EXPECT_EQ(s.context, search::ContextMode::kInherit);
  EXPECT_EQ(s.jobs, 3);

  store::RunRecord old;  // the walking skeleton's config: cannot be resumed
  old.config = {{"budget", 40}, {"policy", "greedy"}};
  EXPECT_THROW(OptionsFromRun(old), core::InvalidInputError);
}

TEST(RunConfigTest, BadSearchFlagsNameTheFlag) {
  OptimizeOptions o;
  o.policy = "annealing";
  try {
    ValidateSearchFlags(o);
    FAIL() << "no error";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("--policy annealing"), std::string::npos);
  }
  o.policy = "greedy";
  o.jobs = 0;
  EXPECT_THROW(ValidateSearchFlags(o), core::InvalidInputError);
  o.jobs = 1;
  o.context = "everything";
  EXPECT_THROW(ValidateSearchFlags(o), core::InvalidInputError);
  o.context = "both";
  o.timing_isolation = "never";
  EXPECT_THROW(ValidateSearchFlags(o), core::InvalidInputError);
  o.timing_isolation = "exclusive";
  EXPECT_NO_THROW(ValidateSearchFlags(o));
}

TEST(CompareTableTest, RowsProblemsColumnsPoliciesAndAGeometricMean) {
  std::vector<CompareCell> cells = {
      {"softmax", "greedy", 0, 2.0, 0, 10, "budget", 1, ""},
      {"softmax", "random", 0, 1.0, 0, 10, "budget", 1, ""},
      {"gelu", "greedy", 0, 8.0, 0, 10, "budget", 1, ""},
      {"gelu", "random", 1, 0.0, 0, 10, "budget", 1, ""},
  };
  const std::string table = CompareTable(cells, {"softmax", "gelu"}, {"greedy", "random"});
  EXPECT_NE(table.find("2.00x"), std::string::npos) << table;
  EXPECT_NE(table.find("8.00x"), std::string::npos) << table;
  EXPECT_NE(table.find("4.00x"), std::string::npos) << table;  // geomean of 2 and 8
  EXPECT_NE(table.find("-"), std::string::npos) << table;      // no correct kernel
  cells[0].confirmed_speedup = 1.9;
  const std::string with_confirmed = CompareTable(cells, {"softmax", "gelu"}, {"greedy", "random"});
  EXPECT_NE(with_confirmed.find("2.00x/1.90x"), std::string::npos) << with_confirmed;
  EXPECT_NE(with_confirmed.find("geomean (confirmed)"), std::string::npos) << with_confirmed;
  CompareOptions options;
  options.policies = {"greedy", "random"};
  options.budget = 10;
  auto doc = CompareJson(options, cells, {"softmax", "gelu"});
  EXPECT_DOUBLE_EQ(doc["geomean"]["greedy"].get<double>(), 4.0);
  // random: 1.0 on softmax, no correct kernel on gelu (counted as 1.0).
  EXPECT_DOUBLE_EQ(doc["geomean"]["random"].get<double>(), 1.0);
  EXPECT_NE(table.find("geomeans count a run without a correct kernel (-) as 1.0"), std::string::npos) << table;
  EXPECT_EQ(doc["cells"].size(), 4u);
}

}  // namespace
}  // namespace kernelevolve::cli

// Suite totals of `kernelevolve bench` (report/bench_summary.h), checked against
// hand-computed fast_p, geometric means and medians.
#include <gtest/gtest.h>

#include <cmath>

#include "report/bench_summary.h"

namespace kernelevolve {
namespace {

report::BenchEntry Entry(const std::string& outcome, double speedup, std::string bound = "unknown",
                         double fraction = 0) {
  report::BenchEntry e;
  e.problem = outcome;
  e.outcome = outcome;
  e.correct = outcome == "correct";
  e.speedup = e.correct ? speedup : 0;
  e.bound = std::move(bound);
  e.roofline_fraction = fraction;
  return e;
}

TEST(BenchSummary, FastPAndGeomeanByHand) {
  // 5 problems: speedups 0.5, 1.2, 1.5, 4.0 (correct) and one unsupported.
  const std::vector<report::BenchEntry> entries = {
      Entry("correct", 0.5, "memory", 0.2), Entry("correct", 1.2, "memory", 0.6),
      Entry("correct", 1.5, "compute", 0.1), Entry("correct", 4.0, "memory", 0.9),
      Entry("unsupported", 0)};
  const report::BenchTotals t = report::SummarizeBench(entries);
  EXPECT_EQ(t.problems, 5);
  EXPECT_EQ(t.correct, 4);
  EXPECT_DOUBLE_EQ(t.correct_rate, 0.8);
  EXPECT_DOUBLE_EQ(t.fast_0, 0.8);
  EXPECT_DOUBLE_EQ(t.fast_1, 0.6);    // 1.2, 1.5, 4.0
  EXPECT_DOUBLE_EQ(t.fast_1_5, 0.2);  // strictly above 1.5: only 4.0
  EXPECT_DOUBLE_EQ(t.fast_2, 0.2);
  // (0.5 * 1.2 * 1.5 * 4.0)^(1/4) = 3.6^(1/4); with the unsupported one as 1.0: 3.6^(1/5).
  EXPECT_NEAR(t.geomean_speedup_correct, std::pow(3.6, 0.25), 1e-12);
  EXPECT_NEAR(t.geomean_speedup_all, std::pow(3.6, 0.2), 1e-12);
  EXPECT_EQ(t.memory_bound, 3);
  EXPECT_DOUBLE_EQ(t.median_memory_roofline_fraction, 0.6);
}

TEST(BenchSummary, InterruptedEntriesAreLeftOutAndEmptyIsZero) {
  std::vector<report::BenchEntry> entries = {Entry("correct", 2.5, "memory", 0.3),
                                             Entry("load_error", 0), Entry("interrupted", 0)};
  const report::BenchTotals t = report::SummarizeBench(entries);
  EXPECT_EQ(t.problems, 2);
  EXPECT_DOUBLE_EQ(t.fast_2, 0.5);
  EXPECT_DOUBLE_EQ(t.geomean_speedup_correct, 2.5);
  EXPECT_NEAR(t.geomean_speedup_all, std::sqrt(2.5), 1e-12);
  EXPECT_DOUBLE_EQ(t.median_memory_roofline_fraction, 0.3);
  entries.push_back(Entry("correct", 1.0, "memory", 0.5));  // even count: mean of the middle two
  EXPECT_DOUBLE_EQ(report::SummarizeBench(entries).median_memory_roofline_fraction, 0.4);
  EXPECT_DOUBLE_EQ(report::FastP(entries, 1.0), 1.0 / 3);  // 1.0 is not faster than 1.0
  const report::BenchTotals none = report::SummarizeBench({});
  EXPECT_EQ(none.problems, 0);
  EXPECT_DOUBLE_EQ(none.fast_0, 0);
  EXPECT_DOUBLE_EQ(none.geomean_speedup_all, 0);
}

TEST(BenchSummary, EntryFromResultJson) {
  report::BenchEntry base;
  base.problem = "gelu";
  const nlohmann::json ok = nlohmann::json::parse(R"({
    "status": "ok", "stop_reason": "budget", "evaluations": 6, "elapsed_seconds": 12.5,
    "best": {"speedup_vs_eager": 1.9, "speedup_vs_eager_spread": [1.7, 2.1],
             "confirmed": {"done": true, "speedup_vs_eager": 1.8, "ci95": [1.6, 2.0], "clearly_faster": true},
             "roofline": {"bound": "memory", "fraction": 0.42}}})");
  const report::BenchEntry e = report::BenchEntryFromResult(ok, base);
  EXPECT_EQ(e.outcome, "correct");
  EXPECT_DOUBLE_EQ(e.speedup, 1.8);
  EXPECT_EQ(e.speedup_source, "confirmed");
  EXPECT_DOUBLE_EQ(e.ci_low, 1.6);
  EXPECT_DOUBLE_EQ(e.search_speedup, 1.9);
  EXPECT_TRUE(e.clearly_faster);
  EXPECT_DOUBLE_EQ(e.roofline_fraction, 0.42);
  EXPECT_EQ(e.evaluations, 6);

  nlohmann::json unconfirmed = ok;
  unconfirmed["best"]["confirmed"]["done"] = false;
  const report::BenchEntry u = report::BenchEntryFromResult(unconfirmed, base);
  EXPECT_EQ(u.speedup_source, "search");
  EXPECT_DOUBLE_EQ(u.speedup, 1.9);
  EXPECT_DOUBLE_EQ(u.ci_high, 2.1);

  const auto unsupported = report::BenchEntryFromResult(
      {{"status", "no_correct_candidate"}, {"stop_reason", "unsupported_op: aten.cumsum.default"}}, base);
  EXPECT_EQ(unsupported.outcome, "unsupported");
  EXPECT_EQ(unsupported.message, "unsupported_op: aten.cumsum.default");
  // No correct kernel: the message says why, from result.json's "failures".
  const auto wrong = report::BenchEntryFromResult(
      {{"status", "no_correct_candidate"}, {"stop_reason", "budget"}, {"evaluations", 2},
       {"failures", "2 incorrect; e.g. node 1 (loop_nest): output.0 differs from the reference on seed 0"}},
      base);
  EXPECT_EQ(wrong.outcome, "no_correct_candidate");
  EXPECT_EQ(wrong.message, "no correct kernel in 2 evaluations: 2 incorrect; e.g. node 1 (loop_nest): output.0 "
                           "differs from the reference on seed 0");
  EXPECT_EQ(report::BenchEntryFromResult({{"status", "no_correct_candidate"}, {"evaluations", 2}}, base).message,
            "no correct kernel in 2 evaluations");  // a result.json from before "failures"
  const auto broken = report::BenchEntryFromResult(
      {{"status", "error"}, {"error", {{"message", "SyntaxError in x.py"}}}}, base);
  EXPECT_EQ(broken.outcome, "load_error");
  EXPECT_EQ(broken.message, "SyntaxError in x.py");
  EXPECT_EQ(report::BenchEntryFromResult(nlohmann::json::array(), base).outcome, "error");
  // A search cut short: its best so far is no result (no speedup shown or counted).
  const auto cut = report::BenchEntryFromResult({{"status", "ok"}, {"stop_reason", "interrupted"},
                                                 {"evaluations", 3}, {"best", ok["best"]}}, base);
  EXPECT_EQ(cut.outcome, "interrupted");
  EXPECT_FALSE(cut.correct);
  EXPECT_EQ(cut.speedup, 0.0);
  EXPECT_EQ(cut.speedup_source, "");
  EXPECT_EQ(cut.evaluations, 3);
}

// bench --resume reads bench.json back: every field written is read again.
TEST(BenchSummary, EntryJsonRoundTrips) {
  report::BenchEntry e = Entry("correct", 1.75, "memory", 0.61);
  e.problem = "gelu";
  e.problem_path = "problems/level1/gelu.py";
  e.problem_hash = "3f2a";
  e.run_dir = "runs/b/gelu";
  e.ci_low = 1.5;
  e.ci_high = 1.9;
  e.speedup_source = "confirmed";
  e.search_speedup = 1.8;
  e.clearly_faster = true;
  e.evaluations = 8;
  e.elapsed_seconds = 31.5;
  e.stop_reason = "budget";
  e.exit_code = 0;
  e.speedup_vs_compile = 1.2;
  e.has_gpu = true;
  const report::BenchEntry back = report::BenchEntryFromJson(report::BenchEntryToJson(e));
  EXPECT_EQ(report::BenchEntryToJson(back), report::BenchEntryToJson(e));
  EXPECT_EQ(report::BenchEntryFromJson(nlohmann::json::array()).outcome, "error");
  EXPECT_EQ(report::BenchEntryFromJson({{"problem", "x"}}).outcome, "error");
  const auto odd = report::BenchEntryFromJson({{"problem", "x"}, {"outcome", "banana"}, {"correct", true}});
  EXPECT_EQ(odd.outcome, "error");  // an outcome bench never writes is not a result
  EXPECT_FALSE(odd.correct);
}

TEST(BenchSummary, TotalsSayNoneRatherThanAZeroGeomean) {
  const std::vector<report::BenchEntry> none;
  EXPECT_NE(report::BenchTable(none, report::SummarizeBench(none)).find("none, no problem finished"),
            std::string::npos);
  const std::vector<report::BenchEntry> failed = {Entry("no_correct_candidate", 0)};
  const std::string table = report::BenchTable(failed, report::SummarizeBench(failed));
  EXPECT_NE(table.find("none of the 1 is correct"), std::string::npos) << table;
  EXPECT_EQ(table.find("0.00x"), std::string::npos) << table;
}

TEST(BenchSummary, TableShowsBothGeomeanForms) {
  const std::vector<report::BenchEntry> entries = {Entry("correct", 2.0, "memory", 0.5), Entry("unsupported", 0)};
  const std::string table = report::BenchTable(entries, report::SummarizeBench(entries));
  EXPECT_NE(table.find("2.00x over the 1 correct problems"), std::string::npos) << table;
  EXPECT_NE(table.find("1.41x over all 2 with incorrect ones counted as 1.0"), std::string::npos) << table;
  EXPECT_NE(table.find("50% copy bw"), std::string::npos) << table;
  EXPECT_NE(table.find("fast_1 0.500"), std::string::npos) << table;
}

TEST(BenchSummary, ColumnsStayAlignedWithALongProblemName) {
  std::vector<report::BenchEntry> entries = {Entry("correct", 2.0), Entry("correct", 3.0)};
  entries[1].problem = "swish_bias_layer_norm_with_a_long_name";
  const std::string table = report::BenchTable(entries, report::SummarizeBench(entries));
  // The "outcome" column starts at the same offset on the header and on both rows.
  std::vector<size_t> starts;
  size_t line = 0;
  for (int row = 0; row < 3; ++row) {
    const size_t end = table.find('\n', line);
    const std::string text = table.substr(line, end - line);
    starts.push_back(text.find(row == 0 ? "outcome" : "correct", text.find(' ')));
    line = end + 1;
  }
  EXPECT_EQ(starts[0], starts[1]) << table;
  EXPECT_EQ(starts[0], starts[2]) << table;
  EXPECT_GT(starts[0], entries[1].problem.size()) << table;
}

TEST(BenchSummary, WideIntervalsAreNamedButStillCounted) {
  // silu as a helper's busy-machine bench measured it: 1.40x in [0.09, 5.78].
  std::vector<report::BenchEntry> entries = {Entry("correct", 1.4), Entry("correct", 3.0), Entry("correct", 1.1),
                                             Entry("no_correct_candidate", 0)};
  entries[0].problem = "silu";
  entries[0].ci_low = 0.09, entries[0].ci_high = 5.78;
  entries[1].problem = "softmax";
  entries[1].ci_low = 2.0, entries[1].ci_high = 4.0;  // exactly 2x wide: not flagged
  entries[2].problem = "relu";
  entries[2].ci_low = 0.5, entries[2].ci_high = 1.2;
  entries[3].ci_low = 0.0, entries[3].ci_high = 0.0;
  const report::BenchTotals t = report::SummarizeBench(entries);
  EXPECT_EQ(t.wide_interval, (std::vector<std::string>{"silu", "relu"}));
  EXPECT_DOUBLE_EQ(t.fast_1, 0.75);  // the flag changes no KernelBench figure
  EXPECT_EQ(report::BenchTotalsToJson(t)["wide_interval_problems"], nlohmann::json({"silu", "relu"}));
  const std::string table = report::BenchTable(entries, t);
  EXPECT_NE(table.find("warning: 2 problem(s) measured with an interval wider than 2x (silu, relu)"),
            std::string::npos) << table;
  const std::vector<report::BenchEntry> steady = {entries[1]};
  EXPECT_EQ(report::BenchTable(steady, report::SummarizeBench(steady)).find("warning"), std::string::npos);
}

}  // namespace
}  // namespace kernelevolve

// The node table of `kernelevolve optimize` (report::SummaryTable): the parent column
// names a warm start's prior kernel "prior", a draft "root" and a child its parent's id.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/candidate.h"
#include "report/run_summary.h"

namespace kernelevolve {
namespace {

search::Node MakeNode(int64_t id, int64_t parent_id, std::string rationale, double fitness) {
  search::Node n;
  n.id = id;
  n.parent_id = parent_id;
  n.candidate.template_name = "pointwise";
  n.candidate.rationale = std::move(rationale);
  n.evaluation.fitness = fitness;
  return n;
}

/// The parent column of the table row of node `id` (rows are "<id> <parent> ...").
std::string ParentOf(const std::string& table, int64_t id) {
  size_t line = 0;
  while (line < table.size()) {
    const size_t end = table.find('\n', line);
    const std::string text = table.substr(line, end == std::string::npos ? std::string::npos : end - line);
    std::istringstream row(text);
    std::string first, second;
    if (row >> first >> second && first == std::to_string(id)) return second;
    if (end == std::string::npos) break;
    line = end + 1;
  }
  return "(no row)";
}

TEST(RunSummaryTable, ParentColumnMarksWarmStartPriors) {
  report::RunSummary s;
  s.problem = "silu";
  s.status = "ok";
  s.stop_reason = "budget";
  s.nodes = {MakeNode(1, -1, std::string(core::kWarmStartRationalePrefix) + "best prior kernel of experience 4", 3.0),
             MakeNode(2, -1, "draft: vector width 16", 2.0), MakeNode(3, 2, "memory-bound at 40%: unroll", 2.5)};
  EXPECT_TRUE(core::IsWarmStartSeed(s.nodes[0].candidate));
  EXPECT_FALSE(core::IsWarmStartSeed(s.nodes[1].candidate));
  const std::string table = report::SummaryTable(s);
  EXPECT_EQ(ParentOf(table, 1), "prior") << table;
  EXPECT_EQ(ParentOf(table, 2), "root") << table;
  EXPECT_EQ(ParentOf(table, 3), "2") << table;
}

TEST(RunSummaryTable, ARooflineAboveTheFmaPeakSaysThePeakMayBeStale) {
  core::RooflineFigures r;
  r.bound = "compute";
  r.fraction = 2.05;  // a fresh-clone review saw 205% after a peak measured under load
  core::MachineContext machine;
  machine.peak_gflops = 64;
  machine.peaks_measured_utc = "2026-12-07T22:10:00Z";
  const std::string note = report::PeakAboveNote(r, machine, /*gpu=*/false);
  EXPECT_EQ(note.rfind("note: 205% of the FMA peak is more than this machine can do: that peak (64 GFLOP/s, "
                       "measured 2026-12-07T22:10:00Z) was likely measured while the machine was busy "
                       "(re-measure with --remeasure-machine)", 0), 0u) << note;
  EXPECT_EQ(report::PeakAboveNote(r, machine, /*gpu=*/true), "");  // torch.mm's peak can be beaten
  r.fraction = 1.1;
  EXPECT_EQ(report::PeakAboveNote(r, machine, false), "");
  r.fraction = 3.0;
  r.bound = "memory";  // in cache: above the DRAM copy bandwidth is normal
  EXPECT_EQ(report::PeakAboveNote(r, machine, false), "");
}

}  // namespace
}  // namespace kernelevolve

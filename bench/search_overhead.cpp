// The search's own overhead per node (select + propose + the two SQLite checkpoints of a
// node), on trees of 1k, 10k and 100k nodes, for every selection policy.
//
// Method: for each size, a store file holding one run with N synthetic nodes (a random
// recursive tree: each node's parent drawn uniformly among the earlier nodes, the first
// 10 are drafts; 30% failures, else fitness uniform in [0.5, 3); 512-byte sources) is
// written once; MCTS statistics and islands are filled in. For each policy a copy of
// the file is resumed by a real SearchLoop (jobs 1) that adds M more nodes with an
// operator that always has a new child and a scripted platform that returns at once.
// Timestamps from the observer split each node's wall time into
//   select:  policy.Select + operator.Propose + the pending-candidate checkpoint
//   commit:  the (instant) fake evaluation + the node's commit transaction
// Times are medians over the M nodes. Usage: search_overhead [TEMP_DIR] [M]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exec/fake_platform.h"
#include "exec/local_evaluator.h"
#include "search/mcts_policy.h"
#include "search/search_loop.h"
#include "search/selection_policy.h"
#include "store/store.h"

namespace ke = kernelevolve;
namespace fs = std::filesystem;

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const std::string kPadding(480, 'x');

/// A new, unseen child for any parent (or draft), forever.
class EndlessOperator : public ke::operators::UniversalOperator {
 public:
  std::string Name() const override { return "bench"; }
  std::optional<std::string> Unsupported(const ke::core::Problem&) const override {
    return std::nullopt;
  }
  std::vector<ke::core::Candidate> Propose(const ke::operators::OperatorContext& ctx,
                                           int n) override {
    std::vector<ke::core::Candidate> out;
    while (static_cast<int>(out.size()) < n) {
      ke::core::Candidate c;
      c.source = fmt::format("// bench child of {} #{}\n//{}\n", ctx.parent ? ctx.parent->id : -1,
                             counter_++, kPadding);
      c.operator_name = "bench";
      c.rationale = "bench";
      if (ctx.seen_hashes && ctx.seen_hashes->count(ke::core::ContentHash(c.source))) continue;
      out.push_back(std::move(c));
    }
    return out;
  }

 private:
  int64_t counter_ = 0;
};

/// Fitness from the source hash: 30% failures, else in [0.5, 3).
ke::exec::FakeOutcome Landscape(const ke::core::Candidate& c) {
  const uint64_t h = std::hash<std::string>{}(c.source);
  if (h % 10 < 3) return {ke::core::Status::kIncorrect, 0};
  return {ke::core::Status::kOk, 100.0 / (0.5 + static_cast<double>(h % 1000) / 400.0)};
}

/// Writes run 1 with `n` synthetic nodes into `path`.
void BuildBase(const fs::path& path, int n) {
  auto store = ke::store::Store::Open(path);
  const int64_t run = store.CreateRun(ke::store::RunRecord{});
  std::mt19937_64 rng(12345);
  ke::search::Tree tree;
  for (int i = 0; i < n; ++i) {
    ke::search::Node node;
    node.parent_id = i < 10 ? -1 : tree.Nodes()[rng() % tree.Nodes().size()].id;
    node.depth = node.parent_id < 0 ? 1 : tree.Get(node.parent_id).depth + 1;
    node.candidate.source = fmt::format("// synthetic {}\n//{}\n", i, kPadding);
    node.candidate.operator_name = "bench";
    node.candidate.rationale = "synthetic";
    const bool ok = rng() % 10 >= 3;
    node.evaluation.status = ok ? ke::core::Status::kOk : ke::core::Status::kIncorrect;
    node.evaluation.correct = ok;
    node.evaluation.fitness = ok ? 0.5 + static_cast<double>(rng() % 1000) / 400.0 : 0.0;
    node.evaluation.speedup_vs_eager.value = node.evaluation.fitness;
    store.CommitNode(run, node);
    tree.Add(node);
  }
  ke::search::MctsPolicy::Rebuild(tree);
  ke::store::SearchCheckpoint checkpoint;
  for (size_t i = 0; i < tree.Nodes().size(); ++i) {
    ke::search::NodeStats s = tree.Nodes()[i].stats;
    s.island = static_cast<int>(i % 2);
    checkpoint.stats.emplace_back(tree.Nodes()[i].id, s);
  }
  const auto& root = tree.Stats(ke::search::kRootId);
  checkpoint.state = {{"version", 1},
                      {"drafts_requested", true},
                      {"root", {{"visits", root.visits}, {"value_sum", root.value_sum}}}};
  store.SaveCheckpoint(run, checkpoint);
}

/// Timestamps per node, from the loop's callbacks.
class Clock : public ke::search::SearchObserver {
 public:
  void OnProposed(int, const ke::core::Candidate&) override { proposed.push_back(Now()); }
  void OnEvaluated(const ke::search::Node&, const ke::search::Tree&, double) override {
    evaluated.push_back(Now());
  }
  std::vector<double> proposed;
  std::vector<double> evaluated;
};

double MedianMs(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return 1000.0 * v[v.size() / 2];
}

struct Figures {
  double load_s = 0;
  double select_ms = 0;
  double commit_ms = 0;
  double per_node_ms = 0;
};

Figures Measure(const fs::path& db, const std::string& policy_name, int n, int added) {
  auto store = ke::store::Store::Open(db);
  // The state saved by BuildBase names no policy: the first resume adopts any.
  ke::core::Problem problem;
  ke::core::TimingStats& eager = problem.eager_baseline;
  eager.n = 10;
  eager.median_us = eager.mean_us = eager.min_us = eager.p10_us = eager.p90_us = 100;
  EndlessOperator op;
  ke::exec::FakePlatform platform(Landscape);
  ke::exec::LocalEvaluator evaluator(platform, problem, ke::platforms::RunOptions{});
  auto policy = ke::search::MakePolicy(policy_name, ke::search::PolicyOptions{});
  ke::search::SearchOptions options;
  options.termination.budget = n + added;
  options.termination.time_limit_seconds = 1e9;
  options.clean_slate_after = -1;
  Clock clock;
  ke::search::SearchLoop loop(problem, op, *policy, evaluator, store, 1, options, &clock);
  const double start = Now();
  loop.Run();
  Figures f;
  std::vector<double> select, commit, total;
  for (size_t i = 1; i < clock.evaluated.size() && i < clock.proposed.size(); ++i) {
    select.push_back(clock.proposed[i] - clock.evaluated[i - 1]);
    commit.push_back(clock.evaluated[i] - clock.proposed[i]);
    total.push_back(clock.evaluated[i] - clock.evaluated[i - 1]);
  }
  f.load_s = clock.proposed.empty() ? 0 : clock.proposed.front() - start;
  f.select_ms = MedianMs(select);
  f.commit_ms = MedianMs(commit);
  f.per_node_ms = MedianMs(total);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "ke_bench_search";
  const int added = argc > 2 ? std::atoi(argv[2]) : 300;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fmt::print("search overhead per node: select + propose + pending checkpoint, then fake\n"
             "evaluation + commit (SQLite WAL, synchronous=NORMAL, file in {}); jobs 1;\n"
             "medians over {} added nodes\n\n",
             dir.string(), added);
  fmt::print("{:>7}  {:<13} {:>10} {:>10} {:>10} {:>10}\n", "nodes", "policy", "per node",
             "select", "commit", "load (s)");
  for (int n : {1000, 10000, 100000}) {
    const fs::path base = dir / fmt::format("base_{}.db", n);
    const double t0 = Now();
    BuildBase(base, n);
    std::fprintf(stderr, "built %d-node store in %.1f s\n", n, Now() - t0);
    for (const std::string& policy : ke::search::PolicyNames()) {
      const fs::path copy = dir / fmt::format("{}_{}.db", policy, n);
      fs::copy_file(base, copy, fs::copy_options::overwrite_existing);
      const Figures f = Measure(copy, policy, n, added);
      fmt::print("{:>7}  {:<13} {:>7.3f} ms {:>7.3f} ms {:>7.3f} ms {:>10.2f}\n", n, policy,
                 f.per_node_ms, f.select_ms, f.commit_ms, f.load_s);
      std::fflush(stdout);
      fs::remove(copy);
      fs::remove(fs::path(copy.string() + "-wal"));
      fs::remove(fs::path(copy.string() + "-shm"));
    }
    fs::remove(base);
  }
  fs::remove_all(dir);
  return 0;
}

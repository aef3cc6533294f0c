// kill -9 a real search mid-way, `kernelevolve resume` it, and check that no node was
// lost or evaluated twice and that the budget holds over both sessions.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

/// One integer from a read-only query, or -1 when the file or table is not there yet.
int64_t QueryInt(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

/// Polls the run's store every 100 ms until it holds `count` nodes or 240 s pass;
/// returns the last count (-1 while the store or its table is not there yet).
int64_t WaitForNodes(const fs::path& db, int64_t count) {
  int64_t nodes = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (std::chrono::steady_clock::now() < deadline) {
    nodes = QueryInt(db, "SELECT COUNT(*) FROM nodes");
    if (nodes >= count) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return nodes;
}

std::string QueryText(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string value;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

/// Starts the kernelevolve binary in the source tree with `args`; stdout and stderr go
/// to `log`. `own_group`: in a new process group led by it (its pgid is its pid).
/// Returns its pid.
pid_t Spawn(const std::vector<std::string>& args, const fs::path& log, bool own_group = false) {
  pid_t pid = fork();
  if (pid == 0) {
    if (own_group && setpgid(0, 0) != 0) _exit(127);
    if (chdir(KE_SOURCE_DIR) != 0) _exit(127);
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out == nullptr || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(127);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(KE_BINARY_PATH));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(KE_BINARY_PATH, argv.data());
    _exit(127);
  }
  return pid;
}

/// The exit code, or -1 when the process died of a signal.
int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ResumeKillTest, KilledRealRunResumesToTheBudgetWithoutLossOrRepeats) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("ke_resume_kill_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path run = dir / "run";
  const fs::path db = run / "kernelevolve.db";
  // A fresh build cache, so that every candidate is compiled and the run is slow enough
  // to be killed in the middle; two in flight, so in-flight work is lost by the kill.
  const pid_t pid = Spawn({"optimize", "problems/level1/softmax.py", "--set", "batch_size=32",
                           "--set", "dim=512", "--min-time", "0.02", "--budget", "12",
                           "--policy", "ucb1", "--jobs", "2", "--confirm-rounds", "0",
                           "--no-kb", "--quiet", "--out", run.string(), "--cache-dir",
                           (dir / "cache").string()},
                          dir / "first.log");
  ASSERT_GT(pid, 0);
  const int64_t nodes = WaitForNodes(db, 3);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  WaitExit(pid);
  ASSERT_GE(nodes, 3) << ReadFile(dir / "first.log");
  const int64_t at_kill = QueryInt(db, "SELECT COUNT(*) FROM nodes");
  ASSERT_LT(at_kill, 12) << "the run finished before it could be killed";
  EXPECT_EQ(QueryText(db, "SELECT status FROM runs"), "running");
  EXPECT_FALSE(fs::exists(run / "result.json"));

  const pid_t resumed = Spawn({"resume", run.string(), "--quiet"}, dir / "resume.log");
  ASSERT_EQ(WaitExit(resumed), 0) << ReadFile(dir / "resume.log");

  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM nodes"), 12);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(DISTINCT source_hash) FROM nodes"), 12);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM nodes AS n WHERE n.parent_id IS NOT NULL AND "
                         "NOT EXISTS (SELECT 1 FROM nodes AS p WHERE p.id = n.parent_id)"),
            0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM pending"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(QueryText(db, "SELECT status FROM runs"), "ok");
  EXPECT_EQ(QueryText(db, "SELECT stop_reason FROM runs"), "budget");
  // The first session's nodes are all still there, unchanged in number.
  EXPECT_EQ(QueryInt(db, fmt::format("SELECT COUNT(*) FROM nodes WHERE id <= {}", at_kill)),
            at_kill);
  ASSERT_TRUE(fs::exists(run / "result.json")) << ReadFile(dir / "resume.log");
  const auto doc = nlohmann::json::parse(ReadFile(run / "result.json"));
  EXPECT_EQ(doc["evaluations"], 12);
  EXPECT_EQ(doc["stop_reason"], "budget");
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_TRUE(fs::exists(run / "best_kernel.cpp"));
  // Resuming a finished run changes nothing.
  const pid_t again = Spawn({"resume", run.string()}, dir / "again.log");
  EXPECT_EQ(WaitExit(again), 0);
  EXPECT_NE(ReadFile(dir / "again.log").find("already finished"), std::string::npos);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM nodes"), 12);
  if (!HasFailure()) fs::remove_all(dir);
}

/// What a process SIGTERMed mid-run left: the nodes its store held when the signal went,
/// its exit code and its log (stdout and stderr).
struct Terminated {
  int64_t nodes = -1;
  bool signalled = false;  // kill(2) reached the group
  int code = -1;
  std::string log;
};

/// Starts kernelevolve with `args` in a process group of its own, waits (WaitForNodes)
/// until `db` holds `count` nodes, sends SIGTERM to the whole group (what timeout(1) and
/// service managers do) and waits for the exit.
Terminated SigtermAfterNodes(const std::vector<std::string>& args, const fs::path& log, const fs::path& db,
                             int64_t count) {
  Terminated t;
  const pid_t pid = Spawn(args, log, /*own_group=*/true);
  if (pid <= 0) return t;
  t.nodes = WaitForNodes(db, count);
  t.signalled = kill(-pid, SIGTERM) == 0;
  t.code = WaitExit(pid);
  t.log = ReadFile(log);
  return t;
}

// SIGTERM to the whole process group (what timeout(1) and service managers send) reaches
// the Python worker too; it must leave the signal to kernelevolve, which stops after
// the candidate in flight, writes result.json and exits 143. The worker used to die of
// it, and the run ended with "worker: write failed: Broken pipe" and no result.json.
TEST(ResumeKillTest, SigtermToTheProcessGroupStopsCleanly) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("ke_sigterm_group_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path run = dir / "run";
  const fs::path db = run / "kernelevolve.db";
  const Terminated t = SigtermAfterNodes(
      {"optimize", "problems/level1/softmax.py", "--set", "batch_size=32", "--set", "dim=512", "--min-time", "0.02",
       "--budget", "40", "--confirm-rounds", "0", "--no-kb", "--quiet", "--out", run.string(), "--cache-dir",
       (dir / "cache").string()},
      dir / "run.log", db, 2);
  const std::string& log = t.log;
  ASSERT_TRUE(t.signalled) << log;
  ASSERT_GE(t.nodes, 2) << log;
  EXPECT_EQ(t.code, 143) << log;
  EXPECT_EQ(log.find("Broken pipe"), std::string::npos) << log;
  ASSERT_TRUE(fs::exists(run / "result.json")) << log;
  const auto doc = nlohmann::json::parse(ReadFile(run / "result.json"));
  EXPECT_EQ(doc["stop_reason"], "interrupted");
  EXPECT_TRUE(fs::exists(run / "best_kernel.cpp"));
  if (!HasFailure()) fs::remove_all(dir);
}

// SIGTERM to a bench mid-way through its first problem: the bench stops after that
// problem's candidate in flight, writes bench.json (interrupted, the problem's entry
// "interrupted", with no speedup), exits 143, says "interrupted after 0 of 2" (no
// unfinished problem counted as done) and how to go on: the same command with
// `--resume`. That is refused with other flags, and with the same flags it resumes the
// cut problem's own search (its budget counts the nodes it had) and runs the other
// (recorded as "error" here: its old folder is set aside).
TEST(ResumeKillTest, SigtermToABenchThenResumeFinishesTheSuite) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("ke_sigterm_bench_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "suite");
  for (const char* name : {"a_softmax.py", "b_softmax.py"}) {
    fs::copy_file(fs::path(KE_SOURCE_DIR) / "problems/level1/softmax.py", dir / "suite" / name);
  }
  const fs::path out = dir / "bench";
  const fs::path db = out / "a_softmax" / "kernelevolve.db";
  std::vector<std::string> args = {"bench", (dir / "suite").string(), "--set", "batch_size=32", "--set", "dim=512",
                                   "--min-time", "0.02", "--budget", "8", "--confirm-rounds", "0",
                                   "--out", out.string(), "--cache-dir", (dir / "cache").string()};
  const Terminated t = SigtermAfterNodes(args, dir / "bench.log", db, 2);
  const std::string& log = t.log;
  ASSERT_TRUE(t.signalled) << log;
  ASSERT_GE(t.nodes, 2) << log;
  EXPECT_EQ(t.code, 143) << log;
  EXPECT_NE(log.find("the same command with `--out <out> --resume` keeps them"), std::string::npos) << log;
  EXPECT_EQ(log.find("the run can be continued with"), std::string::npos) << log;  // optimize's hint, not a bench's
  EXPECT_NE(log.find("interrupted after 0 of 2 problems"), std::string::npos) << log;
  const auto doc = nlohmann::json::parse(ReadFile(out / "bench.json"));
  EXPECT_TRUE(doc["interrupted"].get<bool>());
  ASSERT_EQ(doc["problems"].size(), 1u) << doc.dump(1);
  EXPECT_EQ(doc["problems"][0]["outcome"], "interrupted");
  EXPECT_FALSE(doc["problems"][0]["correct"].get<bool>());  // a cut search's best so far is no result
  EXPECT_EQ(doc["problems"][0]["speedup"].get<double>(), 0.0);

  // A problem that ended "error" (kernelevolve failing, not the problem) runs again from
  // an empty folder; its old folder is kept aside.
  auto edited = doc;
  edited["problems"].push_back({{"problem", "b_softmax"}, {"outcome", "error"}, {"message", "no dlpack.h"},
                                {"run_dir", (out / "b_softmax").string()}});
  { std::ofstream(out / "bench.json") << edited.dump(1); }
  fs::create_directories(out / "b_softmax");
  { std::ofstream(out / "b_softmax" / "result.json") << R"({"status": "error"})"; }

  args.push_back("--resume");
  // An edited problem file: its earlier figures no longer describe it.
  const std::string original = ReadFile(dir / "suite" / "a_softmax.py");
  { std::ofstream(dir / "suite" / "a_softmax.py", std::ios::app) << "\n# edited\n"; }
  const pid_t edited_run = Spawn(args, dir / "edited.log");
  ASSERT_GT(edited_run, 0);
  EXPECT_EQ(WaitExit(edited_run), 2) << ReadFile(dir / "edited.log");
  EXPECT_NE(ReadFile(dir / "edited.log").find("a_softmax.py changed since the bench ran it"), std::string::npos)
      << ReadFile(dir / "edited.log");
  { std::ofstream(dir / "suite" / "a_softmax.py") << original; }

  std::vector<std::string> other_budget = args;
  other_budget[9] = "9";  // --budget 9: figures measured another way
  const pid_t refused = Spawn(other_budget, dir / "refused.log");
  ASSERT_GT(refused, 0);
  EXPECT_EQ(WaitExit(refused), 2) << ReadFile(dir / "refused.log");
  EXPECT_NE(ReadFile(dir / "refused.log").find("budget 8 there, 9 here"), std::string::npos)
      << ReadFile(dir / "refused.log");

  const pid_t resumed = Spawn(args, dir / "resume.log");
  ASSERT_GT(resumed, 0);
  const int code = WaitExit(resumed);
  const std::string resume_log = ReadFile(dir / "resume.log");
  ASSERT_EQ(code, 0) << resume_log;
  EXPECT_NE(resume_log.find("2 problems from"), std::string::npos) << resume_log;
  const auto done = nlohmann::json::parse(ReadFile(out / "bench.json"));
  EXPECT_FALSE(done["interrupted"].get<bool>());
  ASSERT_EQ(done["problems"].size(), 2u) << done.dump(1);
  for (const auto& e : done["problems"]) {
    EXPECT_EQ(e["outcome"], "correct") << e.dump();
    EXPECT_EQ(e["evaluations"].get<int>(), 8) << e.dump();  // the cut run's nodes count toward its budget
  }
  EXPECT_EQ(done["totals"]["problems"].get<int>(), 2);
  int set_aside = 0;
  for (const auto& item : fs::directory_iterator(out)) {
    set_aside += item.path().filename().string().rfind("b_softmax.error-", 0) == 0;
  }
  EXPECT_EQ(set_aside, 1);
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve

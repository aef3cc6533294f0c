// SQLite metadata store: runs, nodes (with lineage) and evaluations.
// Every CommitNode is one transaction, so each evaluated node is a checkpoint.
// Schema and migrations: store/schema.h. Times are seconds since the Unix epoch.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/kernel_profile.h"
#include "search/node.h"
#include "store/llm_call_record.h"

namespace kernelevolve::store {

/// One search run as stored in the `runs` table.
struct RunRecord {
  int64_t id = -1;
  std::string problem;  // problem name
  std::string problem_path;
  std::string target;                                 // "cpu"
  nlohmann::json config = nlohmann::json::object();   // flags as given
  nlohmann::json machine = nlohmann::json::object();  // core::MachineToJson
  double started_unix_s = 0;
  double finished_unix_s = 0;      // 0 while running
  std::string status = "running";  // running | ok | no_correct_candidate | error
  std::string stop_reason;         // budget | time_limit | exhausted | ...
};

/// What a search checkpoint writes besides a node (schema v2; docs/search.md): written
/// in one transaction with the node it goes with (CommitNode) or alone (SaveCheckpoint).
struct SearchCheckpoint {
  /// Inserted into `pending`; their ids are written back here.
  std::vector<search::PendingCandidate> new_pending;
  /// Deleted: the pending candidate whose node is being committed (-1: none).
  int64_t evaluated_pending_id = -1;
  /// Deleted without a node (duplicates found on resume, leftovers of a finished run).
  std::vector<int64_t> dropped_pending;
  /// node_stats rows to insert or replace, by node id (the root's stats live in `state`).
  std::vector<std::pair<int64_t, search::NodeStats>> stats;
  /// Replaces the run's search_state document; null leaves it as it is.
  nlohmann::json state;
};

/// Store::Open on a file that exists but is not an SQLite database (garbage, truncated):
/// an IoError (as before) that the CLI reports as the user's bad input (exit 2).
class NotAStoreError : public core::IoError {
 public:
  using core::IoError::IoError;
};

/// A connection to one store file. Move-only RAII (closes the connection). Not
/// thread-safe: give each thread (or process) its own Store on the same file; WAL mode
/// lets readers see every committed node while a writer works, and a writer waits up to
/// 5000 ms (busy_timeout) for another writer's lock before failing with IoError.
/// Every database failure throws core::IoError naming the file and sqlite3_errmsg.
class Store {
 public:
  /// Opens or creates the database at `path` (schema created or migrated through
  /// PRAGMA user_version; WAL journal; foreign keys on; busy_timeout 5000 ms).
  /// Throws IoError when it cannot be opened: missing directory, a file that is not a
  /// database (NotAStoreError, an IoError), or a schema newer than this build.
  static Store Open(const std::filesystem::path& path);
  /// Opens an existing store for reading its runs (reports): never creates the file and
  /// never adds kernelevolve's tables to a database that lacks them (an older kernelevolve
  /// schema is migrated as Open does). Throws NotAStoreError naming `path` when the file
  /// is missing, is not an SQLite database, or is an SQLite database without
  /// kernelevolve's schema (PRAGMA user_version 0); IoError as Open otherwise.
  static Store OpenExisting(const std::filesystem::path& path);
  Store(Store&& other) noexcept;
  Store& operator=(Store&& other) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  /// The file this store was opened on.
  const std::filesystem::path& Path() const { return path_; }

  /// Inserts a run (run.id is ignored); returns its id. started_unix_s == 0 means "now".
  int64_t CreateRun(const RunRecord& run);
  /// Updates status, stop_reason and sets finished_unix_s to now. Throws InternalError
  /// when no run has this id.
  void FinishRun(int64_t run_id, const std::string& status, const std::string& stop_reason);
  /// The run with this id, or nullopt.
  std::optional<RunRecord> GetRun(int64_t run_id) const;
  /// Every run in the file, in id order (oldest first).
  std::vector<RunRecord> ListRuns() const;

  /// Inserts the node and its evaluation in one transaction (BEGIN IMMEDIATE ... COMMIT,
  /// rolled back on any failure, leaving node.id at -1); sets node.id, and
  /// node.created_unix_s to now when it was 0. parent_id -1 is stored as NULL (a draft).
  /// An empty source_hash is filled with core::ContentHash(source) and written back.
  /// The node's source text is stored too. Throws IoError on a database failure (an
  /// unknown run_id or parent_id violates a foreign key), InternalError when the node
  /// was already committed (node.id >= 0).
  void CommitNode(int64_t run_id, search::Node& node);
  /// CommitNode, plus a search checkpoint in the same transaction: after the node rows
  /// are inserted (node.id set), `on_inserted(node)` runs (it may fill `checkpoint`:
  /// the search adds the node to its tree and lets the policy update statistics there),
  /// then `checkpoint` is written. On any failure everything is rolled back, node.id is
  /// -1 again, and the error is rethrown (IoError for the database; whatever
  /// on_inserted threw).
  void CommitNode(int64_t run_id, search::Node& node, SearchCheckpoint& checkpoint,
                  const std::function<void(const search::Node&)>& on_inserted = nullptr);
  /// Rewrites the fitness and speedup columns of these committed nodes' evaluations in
  /// one transaction (the search rescores a run's nodes when its eager baseline
  /// improves). Throws IoError on a database failure (rolled back), InternalError for a
  /// node that was never committed (id < 0).
  void UpdateScores(const std::vector<search::Node>& nodes);
  /// Writes a checkpoint without a node, in one transaction; sets the ids of
  /// checkpoint.new_pending. Throws IoError (foreign keys: unknown run or parent).
  void SaveCheckpoint(int64_t run_id, SearchCheckpoint& checkpoint);
  /// The run's pending candidates in id order (the order they were chosen).
  std::vector<search::PendingCandidate> LoadPending(int64_t run_id) const;
  /// The run's node_stats rows, by node id order. Nodes without a row have default stats.
  std::vector<std::pair<int64_t, search::NodeStats>> LoadNodeStats(int64_t run_id) const;
  /// The run's search_state document, or nullopt when none was saved.
  std::optional<nlohmann::json> LoadSearchState(int64_t run_id) const;

  /// All nodes of a run, in id order, with their evaluations (checks included).
  std::vector<search::Node> LoadNodes(int64_t run_id) const;
  /// One node with its evaluation, or nullopt when no node has this id.
  std::optional<search::Node> GetNode(int64_t node_id) const;
  /// The node and its ancestors, root-most first (the draft first, `node_id` last).
  /// Empty when no node has this id.
  std::vector<search::Node> Lineage(int64_t node_id) const;
  /// The k correct nodes of a run with the highest fitness, best first; ties go to the
  /// earlier node (lower id). Incorrect nodes are never returned. k <= 0 gives none.
  std::vector<search::Node> TopK(int64_t run_id, int k) const;
  /// Whether a node of this run already has this source hash.
  bool HasSourceHash(int64_t run_id, const std::string& source_hash) const;

  // LLM call ledger (schema v3, issue 7; store/llm_calls.cpp).
  /// Inserts a call (call.id and node_id are ignored unless node_id >= 0); returns its id.
  /// created_unix_s == 0 means now. Throws IoError (an unknown run violates a foreign key).
  int64_t RecordLlmCall(const LlmCallRecord& call);
  /// Sets node_id of the run's calls that produced `source_hash` and have no node yet.
  /// Returns how many rows changed.
  int LinkLlmCalls(int64_t run_id, const std::string& source_hash, int64_t node_id);
  /// The run's calls in id order.
  std::vector<LlmCallRecord> LoadLlmCalls(int64_t run_id) const;

  // Hardware-counter profiles (schema v5, issue 6; store/profiles.cpp).
  /// Inserts or replaces the profile of a committed node. Throws IoError (an unknown
  /// node violates a foreign key).
  void SaveProfile(int64_t node_id, const core::KernelProfile& profile);
  /// The node's profile, or nullopt when it has none. Throws IoError on corrupt JSON.
  std::optional<core::KernelProfile> LoadProfile(int64_t node_id) const;

 private:
  Store(sqlite3* db, std::filesystem::path path);
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace kernelevolve::store

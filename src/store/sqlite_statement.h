// Thin RAII helpers over the SQLite C API used by the store: prepared statements with
// parameters bound by name, columns read by name, and an IMMEDIATE transaction guard.
// Every SQLite failure becomes core::IoError carrying sqlite3_errmsg and the file path.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kernelevolve::store {

/// Throws core::IoError "SQLite store '<path>': <what>: <sqlite3_errmsg(db)>".
/// `db` may be null (then the message says "out of memory", as SQLite would).
[[noreturn]] void ThrowSqliteError(sqlite3* db, std::string_view what,
                                   const std::filesystem::path& path);

/// Runs one or more SQL statements without parameters (DDL, PRAGMA, BEGIN/COMMIT).
/// Never pass user values through here: use Statement and Bind. Throws IoError.
void ExecSql(sqlite3* db, const char* sql, const std::filesystem::path& path);

/// A prepared statement. Parameters are named (":fitness") and bound by name; columns
/// are read by their result name ("fitness"). Move-only; finalized on destruction.
/// Not thread-safe (one connection per thread, as the Store itself).
class Statement {
 public:
  /// Prepares `sql` on `db`. Throws IoError when SQLite rejects it.
  Statement(sqlite3* db, std::string_view sql, const std::filesystem::path& path);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  /// Bind a value to the named parameter (":name"). A NaN double is stored as NULL
  /// (SQLite's rule) and reads back as NaN through Real(). Throws InternalError when the
  /// statement has no such parameter, IoError when SQLite refuses the value.
  Statement& Bind(std::string_view name, int64_t value);
  Statement& Bind(std::string_view name, int value) { return Bind(name, int64_t{value}); }
  Statement& Bind(std::string_view name, bool value) { return Bind(name, int64_t{value}); }
  Statement& Bind(std::string_view name, double value);
  Statement& Bind(std::string_view name, std::string_view value);
  Statement& Bind(std::string_view name, const std::string& value) {
    return Bind(name, std::string_view(value));
  }
  Statement& Bind(std::string_view name, const char* value) {
    return Bind(name, std::string_view(value));
  }
  Statement& BindNull(std::string_view name);

  /// Advances: true when a result row is available, false when the statement is done.
  /// Throws IoError on any SQLite error (constraint violation, busy past the timeout...).
  bool Step();
  /// Runs a statement that returns no rows (INSERT/UPDATE); throws IoError on failure.
  void Run();

  /// Column readers for the current row, by result column name. Throw InternalError when
  /// the column does not exist. NULL reads as 0, NaN (Real) or "" (Text).
  bool IsNull(std::string_view column) const;
  int64_t Int(std::string_view column) const;
  double Real(std::string_view column) const;
  std::string Text(std::string_view column) const;

 private:
  int ParameterIndex(std::string_view name) const;
  int ColumnIndex(std::string_view column) const;
  void CheckBind(int rc, std::string_view name);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::filesystem::path path_;
  std::vector<std::string> column_names_;
};

/// BEGIN IMMEDIATE on construction (takes the write lock up front, so a concurrent
/// writer waits through busy_timeout instead of failing at COMMIT); ROLLBACK on
/// destruction unless Commit() succeeded. Throws IoError when BEGIN or COMMIT fail.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::filesystem::path& path);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void Commit();

 private:
  sqlite3* db_;
  const std::filesystem::path& path_;
  bool done_ = false;
};

}  // namespace kernelevolve::store

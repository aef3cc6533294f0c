#include "store/sqlite_statement.h"

#include <fmt/format.h>

#include <limits>
#include <string>
#include <utility>

#include "core/error.h"

namespace kernelevolve::store {
namespace {

/// The statement's SQL on one line, cut to ~60 characters, to name it in messages.
std::string ShortSql(std::string_view sql) {
  constexpr size_t kMaxChars = 60;
  std::string text;
  for (const char c : sql) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (text.empty() || text.back() == ' ')) continue;
    text += space ? ' ' : c;
  }
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

}  // namespace

void ThrowSqliteError(sqlite3* db, std::string_view what, const std::filesystem::path& path) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  throw core::IoError(fmt::format("SQLite store '{}': {}: {}", path.string(), what, detail));
}

void ExecSql(sqlite3* db, const char* sql, const std::filesystem::path& path) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    ThrowSqliteError(db, fmt::format("cannot execute '{}'", ShortSql(sql)), path);
  }
}

Statement::Statement(sqlite3* db, std::string_view sql, const std::filesystem::path& path)
    : db_(db), path_(path) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    ThrowSqliteError(db, fmt::format("cannot prepare '{}'", ShortSql(sql)), path);
  }
  const int count = sqlite3_column_count(stmt_);
  column_names_.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const char* name = sqlite3_column_name(stmt_, i);
    column_names_.emplace_back(name != nullptr ? name : "");
  }
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      path_(std::move(other.path_)),
      column_names_(std::move(other.column_names_)) {}

Statement::~Statement() { sqlite3_finalize(stmt_); }

int Statement::ParameterIndex(std::string_view name) const {
  const int index = sqlite3_bind_parameter_index(stmt_, std::string(name).c_str());
  if (index == 0) {
    throw core::InternalError(fmt::format("store: SQL statement '{}' has no parameter '{}'",
                                          ShortSql(sqlite3_sql(stmt_)), name));
  }
  return index;
}

void Statement::CheckBind(int rc, std::string_view name) {
  if (rc != SQLITE_OK) ThrowSqliteError(db_, fmt::format("cannot bind '{}'", name), path_);
}

Statement& Statement::Bind(std::string_view name, int64_t value) {
  CheckBind(sqlite3_bind_int64(stmt_, ParameterIndex(name), value), name);
  return *this;
}

Statement& Statement::Bind(std::string_view name, double value) {
  CheckBind(sqlite3_bind_double(stmt_, ParameterIndex(name), value), name);
  return *this;
}

Statement& Statement::Bind(std::string_view name, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies the bytes, so `value` may die before Step().
  CheckBind(sqlite3_bind_text64(stmt_, ParameterIndex(name), value.data(), value.size(),
                                SQLITE_TRANSIENT, SQLITE_UTF8),
            name);
  return *this;
}

Statement& Statement::BindNull(std::string_view name) {
  CheckBind(sqlite3_bind_null(stmt_, ParameterIndex(name)), name);
  return *this;
}

bool Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  ThrowSqliteError(db_, fmt::format("'{}' failed", ShortSql(sqlite3_sql(stmt_))), path_);
}

void Statement::Run() {
  while (Step()) {
  }
}

int Statement::ColumnIndex(std::string_view column) const {
  for (size_t i = 0; i < column_names_.size(); ++i) {
    if (column_names_[i] == column) return static_cast<int>(i);
  }
  throw core::InternalError(fmt::format("store: SQL statement '{}' has no column '{}'",
                                        ShortSql(sqlite3_sql(stmt_)), column));
}

bool Statement::IsNull(std::string_view column) const {
  return sqlite3_column_type(stmt_, ColumnIndex(column)) == SQLITE_NULL;
}

int64_t Statement::Int(std::string_view column) const {
  return sqlite3_column_int64(stmt_, ColumnIndex(column));
}

double Statement::Real(std::string_view column) const {
  const int index = ColumnIndex(column);
  if (sqlite3_column_type(stmt_, index) == SQLITE_NULL) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return sqlite3_column_double(stmt_, index);
}

std::string Statement::Text(std::string_view column) const {
  const int index = ColumnIndex(column);
  const auto* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return {};
  // Length from column_bytes (called after column_text), so embedded NULs survive.
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, index)));
}

Transaction::Transaction(sqlite3* db, const std::filesystem::path& path) : db_(db), path_(path) {
  ExecSql(db_, "BEGIN IMMEDIATE", path_);
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::Commit() {
  ExecSql(db_, "COMMIT", path_);
  done_ = true;
}

}  // namespace kernelevolve::store

// Internal to the store: how a search::Node and its core::Evaluation map onto the rows
// of `nodes` and `evaluations` (schema.h), and JSON text columns. Column names appear
// once, in node_rows.cpp; SQL is built only from those constants, values are always bound.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "search/node.h"
#include "store/sqlite_statement.h"

namespace kernelevolve::store {

/// Compact JSON text; invalid UTF-8 (an LLM can produce it) becomes U+FFFD, no throw.
std::string DumpJson(const nlohmann::json& value);
/// Parses a JSON text column; throws core::IoError naming `column` and `path` when the
/// stored text is not valid JSON (a corrupted or hand-edited database).
nlohmann::json ParseJson(const std::string& text, std::string_view column,
                         const std::filesystem::path& path);

/// "SELECT <every node and evaluation column, aliased by its name> FROM nodes AS n
/// LEFT JOIN evaluations AS e ON e.node_id = n.id <tail>". `tail` adds joins, WHERE,
/// ORDER BY and LIMIT; it must hold parameters, never values.
std::string SelectNodesSql(std::string_view tail);

/// Inserts the node row (parent_id < 0 -> NULL) and its evaluation row on `db`, inside
/// the caller's transaction; returns the new node id. `created_unix_s` and `source_hash`
/// are written instead of the node's own fields. Throws core::IoError on failure.
int64_t InsertNodeRows(sqlite3* db, const std::filesystem::path& path, int64_t run_id,
                       const search::Node& node, double created_unix_s,
                       const std::string& source_hash);

/// Reads the current row of a SelectNodesSql statement. A node without an evaluation
/// row gets a default core::Evaluation. Throws core::IoError on corrupt JSON or status.
search::Node ReadNode(const Statement& row, const std::filesystem::path& path);
/// Steps `statement` to the end, reading every row with ReadNode.
std::vector<search::Node> ReadNodes(Statement& statement, const std::filesystem::path& path);

}  // namespace kernelevolve::store

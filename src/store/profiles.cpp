// Store methods of the hardware-counter profiles (table profiles, schema v5).
#include <chrono>

#include "core/error.h"
#include "store/node_rows.h"
#include "store/sqlite_statement.h"
#include "store/store.h"

namespace kernelevolve::store {

void Store::SaveProfile(int64_t node_id, const core::KernelProfile& profile) {
  Statement insert(
      db_,
      "INSERT OR REPLACE INTO profiles (node_id, tool, status, profile_json, created_unix_s) "
      "VALUES (:node_id, :tool, :status, :profile_json, :created_unix_s)",
      path_);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  insert.Bind(":node_id", node_id)
      .Bind(":tool", profile.tool)
      .Bind(":status", profile.status)
      .Bind(":profile_json", DumpJson(core::KernelProfileToJson(profile)))
      .Bind(":created_unix_s", now);
  insert.Run();
}

std::optional<core::KernelProfile> Store::LoadProfile(int64_t node_id) const {
  Statement query(db_, "SELECT profile_json FROM profiles WHERE node_id = :node_id", path_);
  query.Bind(":node_id", node_id);
  if (!query.Step()) return std::nullopt;
  const nlohmann::json doc = ParseJson(query.Text("profile_json"), "profiles.profile_json", path_);
  try {
    return core::KernelProfileFromJson(doc);
  } catch (const core::InvalidInputError& e) {
    throw core::IoError("SQLite store '" + path_.string() + "': node " + std::to_string(node_id) +
                        ": stored profile is malformed: " + e.what());
  }
}

}  // namespace kernelevolve::store

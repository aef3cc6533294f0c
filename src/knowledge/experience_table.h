// Reading and writing the `experiences` table of the knowledge database.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "knowledge/experience.h"

namespace kernelevolve::knowledge {

/// Which records to list. Empty strings do not filter.
struct ExperienceFilter {
  std::string platform;
  std::string problem;       // problem name
  std::string op_signature;
  int limit = 1000;          // newest first, at most this many
};

/// Inserts one record in its own IMMEDIATE transaction (safe with concurrent writers:
/// each waits for the other's lock through busy_timeout); returns its id. Throws
/// IoError on a database failure.
int64_t InsertExperience(sqlite3* db, const std::filesystem::path& db_path, const Experience& x);

/// The records that pass `filter`, newest first (highest id first). Throws IoError on a
/// database failure. A record whose JSON columns do not parse (or hold the wrong types):
/// with `unreadable`, skipped and described there ("knowledge base 'PATH': experience 12:
/// experiences.knobs_json is not valid JSON"), so that one damaged row does not hide the
/// others; without it, IoError.
std::vector<Experience> QueryExperiences(sqlite3* db, const std::filesystem::path& db_path,
                                         const ExperienceFilter& filter,
                                         std::vector<std::string>* unreadable = nullptr);

}  // namespace kernelevolve::knowledge

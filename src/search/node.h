// One candidate in the search tree, with what was measured about it.
#pragma once

#include <cstdint>
#include <string>

#include "core/candidate.h"
#include "core/evaluation.h"

namespace kernelevolve::search {

struct Node {
  int64_t id = -1;          // assigned by the store on commit
  int64_t parent_id = -1;   // -1: child of the root (a draft)
  int depth = 1;            // drafts have depth 1
  core::Candidate candidate;
  std::string source_hash;  // core::ContentHash(candidate.source)
  core::Evaluation evaluation;
  double created_unix_s = 0;  // seconds since the epoch
};

}  // namespace kernelevolve::search

// Problem files and fixtures through the queue by content hash (issue 22): published
// once per run by the orchestrator, fetched, checked and cached by each worker.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include "core/error.h"
#include "core/problem.h"
#include "exec/queue_protocol.h"
#include "exec/redis_connection.h"

namespace kernelevolve::exec {

/// A blob is missing from Redis, or its bytes do not hash to their key, or a fixture set
/// does not hash to the job's: the job must not run on this worker.
class BlobMismatchError : public core::Error {
 public:
  explicit BlobMismatchError(const std::string& message) : core::Error(message) {}
};

/// Largest file sent as one blob (Redis's default proto-max-bulk-len is 512 MB).
inline constexpr int64_t kMaxBlobBytes = 512LL << 20;

/// Stores the problem file and every file of problem.fixtures_dir under their content
/// hash (SET NX: a blob already there is not sent again) and returns the reference a job
/// carries, hashes filled in. Blobs expire after `ttl_seconds`. Throws core::IoError
/// (unreadable file, Redis failure) or core::InvalidInputError (a file over
/// kMaxBlobBytes, naming it).
ProblemRef PublishProblem(RedisConnection& redis, const core::Problem& problem,
                          const std::filesystem::path& problem_path, int64_t ttl_seconds = 7 * 24 * 3600);

/// The problem file of `ref` in <cache_root>/problems/<source hash>/<file name>, fetched
/// when missing; verified against its hash either way. Throws BlobMismatchError.
std::filesystem::path FetchProblemFile(RedisConnection& redis, const ProblemRef& ref,
                                       const std::filesystem::path& cache_root);

/// The fixtures of `ref` in <cache_root>/fixtures/<fixtures hash>/, fetched once (into a
/// temporary folder renamed into place) and verified file by file against their hashes,
/// and as a set against ref.fixtures_hash. Throws BlobMismatchError.
std::filesystem::path FetchFixtures(RedisConnection& redis, const ProblemRef& ref,
                                    const std::filesystem::path& cache_root);

/// The fixtures folder a GPU runner reads, which builds eager PyTorch from the
/// manifest's "source_path" (a path on the orchestrator's machine): `dir` (emptied)
/// gets hard links to (else copies of) the files of `fetched` (FetchFixtures' folder,
/// shared and left untouched) and a manifest.json naming `problem_file` instead.
/// Returns `dir`. Throws core::IoError when a file cannot be read or written.
std::filesystem::path LinkFixturesForRunner(const std::filesystem::path& fetched,
                                            const std::filesystem::path& problem_file,
                                            const std::filesystem::path& dir);

}  // namespace kernelevolve::exec

#include "exec/queue_blobs.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernelevolve::exec {
namespace {

namespace fs = std::filesystem;

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::IoError(fmt::format("{}: cannot read", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw core::IoError(fmt::format("{}: cannot write", path.string()));
}

/// Stores `bytes` under its hash unless there; returns the hash.
std::string PutBlob(RedisConnection& redis, const std::string& bytes, const fs::path& from, int64_t ttl_seconds) {
  if (static_cast<int64_t>(bytes.size()) > kMaxBlobBytes) {
    throw core::InvalidInputError(fmt::format(
        "{}: {} MB, over the queue's blob limit of {} MB (Redis's proto-max-bulk-len); evaluate this problem "
        "without --queue, or with smaller sizes (--set)",
        from.string(), bytes.size() >> 20, kMaxBlobBytes >> 20));
  }
  const std::string hash = core::ContentHash(bytes);
  const std::string key = BlobKey(hash);
  RedisReply exists = redis.CommandOk({"EXISTS", key});
  if (exists.integer == 0) redis.CommandOk({"SET", key, bytes, "NX"});
  redis.CommandOk({"EXPIRE", key, std::to_string(ttl_seconds)});
  return hash;
}

/// The blob `hash`, checked against it. Throws BlobMismatchError.
std::string GetBlob(RedisConnection& redis, const std::string& hash, const std::string& what) {
  RedisReply reply = redis.CommandOk({"GET", BlobKey(hash)});
  if (reply.IsNil()) {
    throw BlobMismatchError(fmt::format("{}: blob {} is not in the queue's Redis (expired or never published)",
                                        what, hash));
  }
  if (core::ContentHash(reply.text) != hash) {
    throw BlobMismatchError(fmt::format("{}: the bytes of blob {} hash to {}", what, hash,
                                        core::ContentHash(reply.text)));
  }
  return std::move(reply.text);
}

bool SafeName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

}  // namespace

ProblemRef PublishProblem(RedisConnection& redis, const core::Problem& problem, const fs::path& problem_path,
                          int64_t ttl_seconds) {
  ProblemRef ref;
  ref.file_name = problem_path.filename().string();
  ref.source_hash = PutBlob(redis, ReadBytes(problem_path), problem_path, ttl_seconds);
  std::vector<fs::path> files;
  for (const auto& item : fs::directory_iterator(problem.fixtures_dir)) {
    if (item.is_regular_file()) files.push_back(item.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string bytes = ReadBytes(f);
    ref.fixtures.push_back({f.filename().string(), PutBlob(redis, bytes, f, ttl_seconds),
                            static_cast<int64_t>(bytes.size())});
  }
  ref.fixtures_hash = FixturesHash(ref.fixtures);
  return ref;
}

fs::path FetchProblemFile(RedisConnection& redis, const ProblemRef& ref, const fs::path& cache_root) {
  if (!SafeName(ref.file_name)) throw BlobMismatchError(fmt::format("bad problem file name '{}'", ref.file_name));
  const fs::path dir = cache_root / "problems" / ref.source_hash;
  const fs::path path = dir / ref.file_name;
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && core::FileContentHash(path) == ref.source_hash) return path;
  const std::string bytes = GetBlob(redis, ref.source_hash, "problem file " + ref.file_name);
  fs::create_directories(dir);
  const fs::path tmp = dir / fmt::format(".{}.{}", ref.file_name, ::getpid());
  WriteBytes(tmp, bytes);
  fs::rename(tmp, path);
  return path;
}

fs::path FetchFixtures(RedisConnection& redis, const ProblemRef& ref, const fs::path& cache_root) {
  if (FixturesHash(ref.fixtures) != ref.fixtures_hash) {
    throw BlobMismatchError(fmt::format("the job's fixture list hashes to {}, not to its fixtures hash {}",
                                        FixturesHash(ref.fixtures), ref.fixtures_hash));
  }
  const fs::path dir = cache_root / "fixtures" / ref.fixtures_hash;
  auto intact = [&](const fs::path& d) {
    for (const auto& f : ref.fixtures) {
      if (!SafeName(f.name) || core::FileContentHash(d / f.name) != f.hash) return false;
    }
    return true;
  };
  std::error_code ec;
  if (fs::is_directory(dir, ec) && intact(dir)) return dir;
  const fs::path tmp = cache_root / "fixtures" / fmt::format(".{}.{}", ref.fixtures_hash, ::getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp);
  for (const auto& f : ref.fixtures) {
    if (!SafeName(f.name)) throw BlobMismatchError(fmt::format("bad fixture file name '{}'", f.name));
    WriteBytes(tmp / f.name, GetBlob(redis, f.hash, "fixture " + f.name));
  }
  if (!intact(tmp)) throw BlobMismatchError("the fetched fixtures do not match their hashes");
  // Another worker sharing this cache may have put its copy in place meanwhile.
  if (fs::is_directory(dir, ec) && intact(dir)) {
    fs::remove_all(tmp, ec);
    return dir;
  }
  fs::remove_all(dir, ec);  // a damaged copy
  fs::rename(tmp, dir, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    if (!(fs::is_directory(dir, ec) && intact(dir))) {
      throw core::IoError(fmt::format("{}: cannot put the fetched fixtures in place", dir.string()));
    }
  }
  return dir;
}

fs::path LinkFixturesForRunner(const fs::path& fetched, const fs::path& problem_file, const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& item : fs::directory_iterator(fetched)) {
    if (!item.is_regular_file()) continue;
    const fs::path target = dir / item.path().filename();
    if (item.path().filename() == "manifest.json") {
      nlohmann::json manifest = nlohmann::json::parse(ReadBytes(item.path()));
      manifest["source_path"] = fs::absolute(problem_file).string();
      WriteBytes(target, manifest.dump(1));
      continue;
    }
    std::error_code ec;
    fs::create_hard_link(item.path(), target, ec);
    if (ec) fs::copy_file(item.path(), target);  // another file system
  }
  return dir;
}

}  // namespace kernelevolve::exec

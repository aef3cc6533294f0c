#include "store/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernelevolve::store {
namespace {

namespace fs = std::filesystem;

/// Locks this process holds: lock-file path -> descriptor and guard count.
struct HeldLock {
  int fd = -1;
  int guards = 0;
};
std::mutex& RegistryMutex() {
  static std::mutex m;
  return m;
}
/// The registry of this process. A child forked without exec starts with a copy of its
/// parent's: it forgets it (the parent's locks are not the child's to re-enter; a lock
/// the child asks for conflicts with the parent's, as for any other process).
std::map<std::string, HeldLock>& Registry() {
  static std::map<std::string, HeldLock> held;
  static pid_t owner = ::getpid();
  if (owner != ::getpid()) {
    held.clear();
    owner = ::getpid();
  }
  return held;
}

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string HolderText(const LockHolder& h) {
  return nlohmann::json{{"pid", h.pid}, {"host", h.host}, {"command", h.command}, {"started_utc", h.started_utc}}
             .dump() +
         "\n";
}

/// Replaces the file's content with this process's identity (the lock is held).
void WriteHolder(int fd) {
  const std::string text = HolderText(ThisProcessHolder());
  if (ftruncate(fd, 0) != 0) return;  // the identity is for messages only
  ssize_t written = pwrite(fd, text.data(), text.size(), 0);
  (void)written;
}

std::string BusyMessage(const fs::path& dir, const std::string& flag, const fs::path& lock_file) {
  // The holder writes its identity right after taking the lock: a refused process that
  // reads in between sees an empty file, so it looks again for a moment.
  LockHolder h;
  for (int attempt = 0; attempt < 20 && h.pid == 0; ++attempt) {
    h = ReadLockHolder(lock_file);
    if (h.pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  const std::string who = h.pid == 0 ? std::string("another process (identity not recorded)")
                                     : fmt::format("pid {} on {}, started {}: {}", h.pid, h.host,
                                                   h.started_utc, h.command);
  return fmt::format(
      "{} {}: the run directory is in use by {}; wait for it to finish or stop it (lock: {})",
      flag, dir.string(), who, lock_file.string());
}

}  // namespace

LockHolder ThisProcessHolder() {
  LockHolder h;
  h.pid = static_cast<long>(::getpid());
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) h.host = host;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  h.command = raw.empty() ? "kernelevolve" : raw;
  h.started_utc = UtcNow();
  return h;
}

LockHolder ReadLockHolder(const fs::path& lock_file) {
  LockHolder h;
  std::ifstream in(lock_file);
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    const auto doc = nlohmann::json::parse(ss.str());
    h.pid = doc.value("pid", 0L);
    h.host = doc.value("host", "");
    h.command = doc.value("command", "");
    h.started_utc = doc.value("started_utc", "");
  } catch (const nlohmann::json::exception&) {
    h.pid = 0;  // empty or being rewritten
  }
  return h;
}

RunDirectoryLock RunDirectoryLock::Acquire(const fs::path& dir, const std::string& flag) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw core::InvalidInputError(
        fmt::format("{} {}: cannot create the run directory: {}", flag, dir.string(), ec.message()));
  }
  const fs::path lock_file = fs::weakly_canonical(dir / kRunLockFileName, ec);
  const std::string key = (ec ? dir / kRunLockFileName : lock_file).string();
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Registry().find(key);
  if (it != Registry().end()) {  // this process holds it already (resume -> optimize)
    ++it->second.guards;
    return RunDirectoryLock(key);
  }
  const int fd = ::open(key.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw core::InvalidInputError(
        fmt::format("{} {}: cannot create the lock file {}: {}", flag, dir.string(), key, std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) throw RunDirectoryBusyError(BusyMessage(dir, flag, key));
    throw core::InvalidInputError(
        fmt::format("{} {}: cannot lock {}: {}", flag, dir.string(), key, std::strerror(err)));
  }
  WriteHolder(fd);
  Registry()[key] = HeldLock{fd, 1};
  return RunDirectoryLock(key);
}

RunDirectoryLock::RunDirectoryLock(RunDirectoryLock&& other) noexcept : key_(std::move(other.key_)) {
  other.key_.clear();
}

RunDirectoryLock& RunDirectoryLock::operator=(RunDirectoryLock&& other) noexcept {
  if (this != &other) {
    Release();
    key_ = std::move(other.key_);
    other.key_.clear();
  }
  return *this;
}

RunDirectoryLock::~RunDirectoryLock() { Release(); }

void RunDirectoryLock::Release() {
  if (key_.empty()) return;
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Registry().find(key_);
  if (it != Registry().end() && --it->second.guards == 0) {  // (after a fork, the parent's are gone)
    // The identity goes first, so a later reader never names a finished process.
    if (ftruncate(it->second.fd, 0) != 0) {
      // nothing to do: the lock is released by close either way
    }
    ::close(it->second.fd);
    Registry().erase(it);
  }
  key_.clear();
}

}  // namespace kernelevolve::store

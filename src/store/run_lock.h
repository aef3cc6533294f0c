// A run directory held by one process at a time (issue 22): an flock(2) on
// <run dir>/kernelevolve.lock, with the holder's identity written into the file.
#pragma once

#include <filesystem>
#include <string>

#include "core/error.h"

namespace kernelevolve::store {

/// Who holds a run directory: written into the lock file by the holder, read back by a
/// refused process for its message.
struct LockHolder {
  long pid = 0;
  std::string host;
  std::string command;     // the holder's command line, arguments joined by spaces
  std::string started_utc; // "2026-12-02T02:40:00Z"
};

/// Another live process holds the run directory. Bad input for the CLI (exit 2): the
/// message names the holder (pid, host, command, start time) and the lock file.
class RunDirectoryBusyError : public core::InvalidInputError {
 public:
  explicit RunDirectoryBusyError(const std::string& message) : core::InvalidInputError(message) {}
};

/// The name of the lock file inside a run directory.
inline constexpr const char* kRunLockFileName = "kernelevolve.lock";

/// Holds <dir>/kernelevolve.lock while alive. The lock is the kernel's (flock, on an
/// O_CLOEXEC descriptor, so candidate and worker children never inherit it): a holder
/// killed with SIGKILL, or a machine that reboots, leaves no stale lock behind. The file
/// itself stays (unlinking it would let two processes lock two different files).
/// Re-entrant within one process: `resume` locks, then the search it starts locks the
/// same directory again; the lock is released when the last guard goes.
class RunDirectoryLock {
 public:
  /// Creates `dir` when missing, then takes the lock without waiting. `flag` names the
  /// option the directory came from ("--out", "run_dir") for the message. Throws
  /// RunDirectoryBusyError when another process holds it, core::InvalidInputError when
  /// the directory or lock file cannot be created.
  static RunDirectoryLock Acquire(const std::filesystem::path& dir, const std::string& flag = "--out");

  RunDirectoryLock() = default;  // holds nothing
  RunDirectoryLock(RunDirectoryLock&& other) noexcept;
  RunDirectoryLock& operator=(RunDirectoryLock&& other) noexcept;
  RunDirectoryLock(const RunDirectoryLock&) = delete;
  RunDirectoryLock& operator=(const RunDirectoryLock&) = delete;
  ~RunDirectoryLock();

  /// Whether this guard holds a lock.
  bool Held() const { return !key_.empty(); }

 private:
  explicit RunDirectoryLock(std::string key) : key_(std::move(key)) {}
  void Release();
  std::string key_;  // canonical lock-file path; empty when nothing is held
};

/// The holder recorded in a lock file; pid 0 when the file is empty or unreadable.
LockHolder ReadLockHolder(const std::filesystem::path& lock_file);

/// This process: pid, host name, command line (/proc/self/cmdline), start time now.
LockHolder ThisProcessHolder();

}  // namespace kernelevolve::store

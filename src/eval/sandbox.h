// Runs a command in a child process with resource limits and no network.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kernelevolve::eval {

struct SandboxLimits {
  double wall_timeout_seconds = 30;     // the whole process group is SIGKILLed after this
  int64_t memory_bytes = 4LL << 30;     // RLIMIT_AS; 0 = unlimited
  int64_t cpu_seconds = 0;              // RLIMIT_CPU; 0 = derive: 2 * threads * wall timeout
                                        // (threads = online CPUs: the sandbox cannot know more)
  int64_t file_size_bytes = 64LL << 20; // RLIMIT_FSIZE
  bool isolate_network = true;          // unshare a fresh network namespace (loopback down)
  /// Mount the whole file system read-only for the child (own mount namespace), except
  /// `writable_paths` (existing directories, absolute), which stay writable. Falls back
  /// to the normal view when the namespace cannot be made (docs/sandbox.md).
  bool read_only_filesystem = false;
  std::vector<std::filesystem::path> writable_paths;
  int64_t max_output_bytes = 1 << 20;   // stdout/stderr captured up to this size each; beyond
                                        // it the first and last halves are kept, with a marker
};

struct SandboxResult {
  int exit_code = -1;        // when exited normally
  int signal = 0;            // terminating signal, 0 when exited normally
  bool timed_out = false;    // killed by the wall-clock timeout
  bool network_isolated = false;  // whether the namespace could be created
  bool filesystem_read_only = false;  // whether the read-only view could be made
  std::string stdout_text;
  std::string stderr_text;
  double wall_seconds = 0;
};

/// Runs argv[0] (a path) with argv and exactly `env` as environment, in `cwd`, in a new
/// process group and session. Network isolation: unshare(CLONE_NEWNET) when root,
/// else unshare(CLONE_NEWUSER | CLONE_NEWNET); when both fail the child runs with the
/// host network and network_isolated is false (documented fallback, docs/sandbox.md).
/// With limits.read_only_filesystem the child gets its own mount namespace in which
/// every mount is read-only except limits.writable_paths (filesystem_read_only says
/// whether that worked; when it did not the child runs with the normal view).
/// Never throws for child failures; throws IoError if the child cannot be spawned.
SandboxResult RunSandboxed(const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& env,
                           const std::filesystem::path& cwd, const SandboxLimits& limits);

}  // namespace kernelevolve::eval

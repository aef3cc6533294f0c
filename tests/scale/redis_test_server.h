// A redis-server of its own for one issue-22 test (free local port, no persistence,
// files in a temp folder), and the helpers the queue tests share.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "exec/queue_protocol.h"
#include "exec/redis_connection.h"
#include "scale_test_util.h"

namespace kernelevolve::scale_test {

/// A port nobody listens on right now (bound to port 0, then released).
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

/// A redis-server of its own for one test: no persistence, files in a temp folder,
/// killed by the destructor.
class RedisServer {
 public:
  /// Starts on `port` (0: a free one); a restart on the same port takes the old one's.
  explicit RedisServer(const fs::path& dir, int port = 0) : dir_(dir), port_(port > 0 ? port : FreePort()) {
    fs::create_directories(dir_);
    pid_ = SpawnProgram("redis-server",
                        {"--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                         "--dir", dir_.string(), "--daemonize", "no"},
                        dir_ / "redis.log");
  }
  ~RedisServer() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      WaitExit(pid_);
    }
  }
  /// Whether it answers PING within `seconds`.
  bool Ready(double seconds) const {
    return WaitFor(
        [&] {
          try {
            exec::RedisConnection::Connect(exec::ParseRedisUrl(Url()), 1, 1);
            return true;
          } catch (const core::Error&) {
            return false;
          }
        },
        seconds);
  }
  int port() const { return port_; }
  /// Kills it now (SIGKILL: a crash, nothing saved).
  void Kill() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      WaitExit(pid_);
      pid_ = -1;
    }
  }
  std::string Url() const { return fmt::format("redis://127.0.0.1:{}/0", port_); }
  std::string Log() const { return ReadFile(dir_ / "redis.log"); }

 private:
  fs::path dir_;
  int port_;
  pid_t pid_ = -1;
};

inline exec::RedisConnection Connect(const RedisServer& redis) {
  return exec::RedisConnection::Connect(exec::ParseRedisUrl(redis.Url()));
}

/// Jobs `consumer` holds unacknowledged (XPENDING's extended form).
inline size_t PendingFor(exec::RedisConnection& redis, const std::string& consumer) {
  exec::RedisReply r = redis.Command({"XPENDING", exec::JobStreamKey("cpu"), exec::kWorkerGroup, "-", "+", "10",
                                      consumer});
  return r.kind == exec::RedisReply::Kind::kArray ? r.elements.size() : 0;
}

/// Kills a process started by the test unless it already exited.
struct Reaper {
  std::vector<pid_t> pids;
  ~Reaper() {
    for (pid_t p : pids) {
      if (p > 0 && kill(p, SIGKILL) == 0) WaitExit(p);
    }
  }
};

}  // namespace kernelevolve::scale_test

// One connection to the queue's Redis server (hiredis, synchronous), issue 22.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/redis_url.h"

struct redisContext;

namespace kernelevolve::exec {

/// A reply, copied out of hiredis: a value tree that outlives the connection.
struct RedisReply {
  enum class Kind { kNil, kString, kInteger, kArray, kStatus, kError };
  Kind kind = Kind::kNil;
  std::string text;                  // kString, kStatus, kError
  long long integer = 0;             // kInteger
  std::vector<RedisReply> elements;  // kArray
  bool IsNil() const { return kind == Kind::kNil; }
  bool IsError() const { return kind == Kind::kError; }
};

/// Not thread-safe: one connection per thread. Commands are sent as argument vectors
/// (binary-safe: a fixture file is one argument).
class RedisConnection {
 public:
  /// Connects and selects url.db; every command then waits at most
  /// `command_timeout_seconds` for its reply. Throws core::InvalidInputError (one line
  /// naming the URL: refused, unknown host, timeout, SELECT refused) when the server
  /// cannot be used: a bad --queue is the user's input.
  static RedisConnection Connect(const RedisUrl& url, double connect_timeout_seconds = 5,
                                 double command_timeout_seconds = 30);
  RedisConnection(RedisConnection&&) noexcept = default;
  RedisConnection& operator=(RedisConnection&&) noexcept = default;
  ~RedisConnection();

  /// Sends one command and returns its reply; an error reply (-ERR ...) is a value
  /// (Kind::kError). Throws core::IoError when the connection fails (server gone,
  /// timeout): the connection is unusable afterwards.
  RedisReply Command(const std::vector<std::string>& args);
  /// Command(), throwing core::IoError with the server's message on an error reply.
  RedisReply CommandOk(const std::vector<std::string>& args);
  const RedisUrl& url() const { return url_; }

 private:
  struct Free {
    void operator()(redisContext* c) const;
  };
  RedisConnection(RedisUrl url, redisContext* context) : url_(std::move(url)), context_(context) {}
  RedisUrl url_;
  std::unique_ptr<redisContext, Free> context_;
};

}  // namespace kernelevolve::exec

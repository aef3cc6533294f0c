#include "exec/redis_connection.h"

#include <fmt/format.h>

#include "core/error.h"

#if KE_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#include <sys/time.h>

namespace kernelevolve::exec {
namespace {

timeval ToTimeval(double seconds) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(tv.tv_sec)) * 1e6);
  return tv;
}

RedisReply Copy(const redisReply* r) {
  RedisReply out;
  if (r == nullptr) return out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.kind = RedisReply::Kind::kString;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::kStatus;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.kind = RedisReply::Kind::kError;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Copy(r->element[i]));
      break;
    default:
      out.kind = RedisReply::Kind::kNil;
  }
  return out;
}

}  // namespace

void RedisConnection::Free::operator()(redisContext* c) const {
  if (c != nullptr) redisFree(c);
}

RedisConnection RedisConnection::Connect(const RedisUrl& url, double connect_timeout_seconds,
                                         double command_timeout_seconds) {
  redisContext* c = redisConnectWithTimeout(url.host.c_str(), url.port, ToTimeval(connect_timeout_seconds));
  if (c == nullptr || c->err != 0) {
    const std::string why = c == nullptr ? "out of memory" : c->errstr;
    if (c != nullptr) redisFree(c);
    throw core::InvalidInputError(fmt::format("--queue {}: cannot reach Redis at {}:{}: {}", url.text, url.host,
                                              url.port, why));
  }
  RedisConnection conn(url, c);
  redisSetTimeout(c, ToTimeval(command_timeout_seconds));
  RedisReply pong;
  try {
    pong = conn.Command({"PING"});
  } catch (const core::IoError& e) {
    throw core::InvalidInputError(fmt::format("--queue {}: no answer to PING: {}", url.text, e.what()));
  }
  if (pong.IsError()) {
    throw core::InvalidInputError(fmt::format("--queue {}: the server refused PING: {}", url.text, pong.text));
  }
  if (url.db != 0) {
    RedisReply selected = conn.Command({"SELECT", std::to_string(url.db)});
    if (selected.IsError()) {
      throw core::InvalidInputError(
          fmt::format("--queue {}: cannot select database {}: {}", url.text, url.db, selected.text));
    }
  }
  return conn;
}

RedisConnection::~RedisConnection() = default;

RedisReply RedisConnection::Command(const std::vector<std::string>& args) {
  if (!context_) throw core::IoError(fmt::format("Redis {}: the connection is closed", url_.text));
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_.get(), static_cast<int>(args.size()), argv.data(), lens.data()));
  if (reply == nullptr) {
    const std::string why = context_->errstr;
    context_.reset();
    throw core::IoError(fmt::format("Redis {}: {} failed: {}", url_.text, args.empty() ? "" : args[0], why));
  }
  RedisReply out = Copy(reply);
  freeReplyObject(reply);
  return out;
}

RedisReply RedisConnection::CommandOk(const std::vector<std::string>& args) {
  RedisReply reply = Command(args);
  if (reply.IsError()) {
    throw core::IoError(fmt::format("Redis {}: {} refused: {}", url_.text, args.empty() ? "" : args[0], reply.text));
  }
  return reply;
}

}  // namespace kernelevolve::exec

#else  // built without hiredis (CMake found no libhiredis-dev): --queue and worker say so

namespace kernelevolve::exec {

void RedisConnection::Free::operator()(redisContext*) const {}

RedisConnection RedisConnection::Connect(const RedisUrl& url, double, double) {
  throw core::InvalidInputError(fmt::format(
      "--queue {}: this kernelevolve was built without a Redis client (hiredis was not found when it was "
      "configured): install libhiredis-dev (scripts/setup.sh does) and build again",
      url.text));
}

RedisConnection::~RedisConnection() = default;

RedisReply RedisConnection::Command(const std::vector<std::string>&) {
  throw core::IoError("Redis " + url_.text + ": built without a Redis client");
}

RedisReply RedisConnection::CommandOk(const std::vector<std::string>& args) { return Command(args); }

}  // namespace kernelevolve::exec

#endif

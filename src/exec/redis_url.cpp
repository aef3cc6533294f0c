#include "exec/redis_url.h"

#include <charconv>

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::exec {
namespace {

bool ParseInt(const std::string& s, int& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

RedisUrl ParseRedisUrl(const std::string& text, const std::string& flag) {
  auto bad = [&](const std::string& why) {
    return core::InvalidInputError(
        fmt::format("{} {}: {}; expected redis://HOST:PORT[/DB], e.g. redis://127.0.0.1:6379/0", flag, text, why));
  };
  constexpr std::string_view kScheme = "redis://";
  if (!text.starts_with(kScheme)) throw bad("not a redis:// URL");
  RedisUrl url;
  url.text = text;
  std::string rest = text.substr(kScheme.size());
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db.empty() && (!ParseInt(db, url.db) || url.db < 0)) throw bad(fmt::format("bad database number '{}'", db));
  }
  if (rest.find('@') != std::string::npos) throw bad("user names and passwords are not supported");
  if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (!ParseInt(port, url.port) || url.port < 1 || url.port > 65535) throw bad(fmt::format("bad port '{}'", port));
  }
  if (rest.empty()) throw bad("no host");
  url.host = rest;
  return url;
}

}  // namespace kernelevolve::exec

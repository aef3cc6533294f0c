// The address of the evaluation queue's Redis server: redis://HOST:PORT[/DB] (issue 22).
#pragma once

#include <string>

namespace kernelevolve::exec {

struct RedisUrl {
  std::string text;   // as given, for messages
  std::string host;
  int port = 6379;
  int db = 0;
};

/// Parses redis://HOST[:PORT][/DB] (PORT 1-65535, default 6379; DB >= 0, default 0).
/// `flag` names the option in the message ("--queue"). Throws core::InvalidInputError,
/// one line, on any other form (another scheme, no host, a bad port or DB number).
RedisUrl ParseRedisUrl(const std::string& text, const std::string& flag = "--queue");

}  // namespace kernelevolve::exec

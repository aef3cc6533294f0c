// One logical LLM call: HTTP attempts with retries, backoff and a money check before
// every attempt that could be billed.
#pragma once

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "operators/llm/provider.h"
#include "operators/llm/retry_policy.h"

namespace kernelevolve::operators::llm {

/// How a call ended.
enum class CallStatus {
  kOk,           // a 200 with a well-formed body
  kFatal,        // 401/403/404: bad key or no such model; the run cannot go on
  kFailed,       // a final non-retryable status (400, 422, ...) or retries used up
  kStoppedByCap, // before_attempt refused (the cost cap)
};

/// "ok" | "fatal" | "failed" | "stopped_by_cap".
const char* CallStatusName(CallStatus status);

/// The result of Complete().
struct CallResult {
  CallStatus status = CallStatus::kFailed;
  ChatResponse response;      // valid when status == kOk
  int attempts = 0;           // HTTP attempts made
  int http_status = 0;        // status of the last attempt (0: no response)
  /// 200 responses whose body could not be read (malformed or cut short): the provider
  /// may have billed them, but their usage is unknown.
  int unreadable_attempts = 0;
  std::string error;          // one line when status != kOk; the attempts' story otherwise empty
  std::vector<std::string> attempt_log;  // one line per failed attempt
  double seconds = 0;         // wall time, backoff waits included
};

/// Waits; tests pass a recorder instead of sleeping.
using Sleeper = std::function<void(double seconds)>;
/// Called before every attempt with the attempt index (0-based); returns a reason to stop
/// (the call then ends with kStoppedByCap and makes no more requests) or nullopt.
using AttemptGuard = std::function<std::optional<std::string>(int attempt)>;

/// Makes the call: builds the request once, posts it, and on a retryable failure
/// (IsRetryableStatus, a timeout, a refused or cut connection, an unreadable 200 body)
/// waits BackoffSeconds (Retry-After honoured) and tries again, up to
/// policy.max_attempts. `stall_seconds` sets the low-speed abort of each attempt
/// (0: only the total timeout). Never throws for network or server failures.
CallResult Complete(const Provider& provider, const ChatRequest& chat, const RetryPolicy& policy,
                    std::mt19937_64& rng, const Sleeper& sleep, const AttemptGuard& before_attempt,
                    double stall_seconds = 0);

}  // namespace kernelevolve::operators::llm

// When and how long to wait before trying an LLM request again.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>

namespace kernelevolve::operators::llm {

/// Exponential backoff with bounded jitter, honouring Retry-After.
///
/// The wait before retry k (k = 0 for the first retry) is
///   backoff(k) = min(max_delay, base_delay * 2^k) * (1 - jitter * u),  u ~ U[0, 1)
/// so it lies in [(1 - jitter) * cap_k, cap_k] ("equal jitter": spreads clients out
/// without ever waiting longer than the exponential schedule; AWS Architecture Blog,
/// "Exponential Backoff And Jitter", 2015). When the server sent Retry-After, the wait
/// is max(retry_after, backoff(k)): the server's wish is a minimum. A Retry-After longer
/// than max_retry_after ends the call instead of sleeping for it.
struct RetryPolicy {
  int max_attempts = 6;            // attempts in total, the first included
  double base_delay_seconds = 1.0;
  double max_delay_seconds = 60.0;
  double jitter = 0.5;             // in [0, 1]
  double max_retry_after_seconds = 300.0;
};

/// Whether an HTTP status is worth retrying: 408, 409, 425, 429, and every 5xx
/// (Anthropic's 529 overloaded_error included). 4xx otherwise are final.
bool IsRetryableStatus(int status);

/// Parses a Retry-After header value: delta-seconds ("7", "1.5") or an HTTP-date
/// ("Wed, 21 Oct 2015 07:28:00 GMT", RFC 9110 section 10.2.3) relative to `now_unix_s`.
/// Returns seconds >= 0, or nullopt when the value is neither.
std::optional<double> ParseRetryAfter(const std::string& value, double now_unix_s);

/// The wait before retry `retry_index` (0-based), as documented on RetryPolicy;
/// `retry_after` is the parsed header, if any. Draws one number from `rng`.
double BackoffSeconds(const RetryPolicy& policy, int retry_index,
                      std::optional<double> retry_after, std::mt19937_64& rng);

}  // namespace kernelevolve::operators::llm

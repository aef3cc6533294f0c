#include "operators/llm/retry_policy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>

namespace kernelevolve::operators::llm {

bool IsRetryableStatus(int status) {
  return status == 408 || status == 409 || status == 425 || status == 429 ||
         (status >= 500 && status <= 599);
}

std::optional<double> ParseRetryAfter(const std::string& value, double now_unix_s) {
  std::string v = value;
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  const double seconds = std::strtod(v.c_str(), &end);
  if (end == v.c_str() + v.size()) {
    if (!std::isfinite(seconds) || seconds < 0) return std::nullopt;
    return seconds;
  }
  std::tm tm{};
  const char* parsed = strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!parsed || *parsed != '\0') return std::nullopt;
  const double at = static_cast<double>(timegm(&tm));
  return std::max(0.0, at - now_unix_s);
}

double BackoffSeconds(const RetryPolicy& policy, int retry_index, std::optional<double> retry_after,
                      std::mt19937_64& rng) {
  const double exponent = std::min(retry_index, 62);
  const double cap = std::min(policy.max_delay_seconds, policy.base_delay_seconds * std::pow(2.0, exponent));
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  const double jitter = std::clamp(policy.jitter, 0.0, 1.0);
  const double backoff = cap * (1.0 - jitter * u);
  return retry_after ? std::max(*retry_after, backoff) : backoff;
}

}  // namespace kernelevolve::operators::llm

#include "operators/llm/llm_client.h"

#include <fmt/format.h>

#include <chrono>

namespace kernelevolve::operators::llm {
namespace {

double NowUnix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

const char* CallStatusName(CallStatus status) {
  switch (status) {
    case CallStatus::kOk: return "ok";
    case CallStatus::kFatal: return "fatal";
    case CallStatus::kFailed: return "failed";
    case CallStatus::kStoppedByCap: return "stopped_by_cap";
  }
  return "failed";
}

CallResult Complete(const Provider& provider, const ChatRequest& chat, const RetryPolicy& policy,
                    std::mt19937_64& rng, const Sleeper& sleep, const AttemptGuard& before_attempt,
                    double stall_seconds) {
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](CallResult r) {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  HttpRequest request = provider.BuildRequest(chat);
  request.timeout_seconds = provider.Config().timeout_seconds;
  request.connect_timeout_seconds = provider.Config().connect_timeout_seconds;
  request.stall_seconds = stall_seconds;
  CallResult result;
  for (int attempt = 0; attempt < std::max(1, policy.max_attempts); ++attempt) {
    if (before_attempt) {
      if (auto stop = before_attempt(attempt)) {
        result.status = CallStatus::kStoppedByCap;
        result.error = *stop;
        return finish(result);
      }
    }
    HttpResponse http = HttpPost(request);
    ++result.attempts;
    result.http_status = http.status;
    std::optional<double> retry_after;
    std::string failure;
    if (http.error == TransportError::kNone && http.status == 200) {
      try {
        result.response = provider.ParseResponse(http.body);
        result.status = CallStatus::kOk;
        result.error.clear();
        return finish(result);
      } catch (const ResponseFormatError& e) {
        ++result.unreadable_attempts;
        failure = fmt::format("unreadable 200 response: {}", e.what());
      }
    } else if (http.error == TransportError::kTruncated && http.status == 200) {
      ++result.unreadable_attempts;  // the body was being sent: possibly billed
      failure = fmt::format("response cut off: {}", http.error_message);
    } else if (http.error != TransportError::kNone) {
      failure = fmt::format("{}: {}", TransportErrorName(http.error), http.error_message);
    } else {
      failure = provider.DescribeError(http.status, http.body);
      if (http.status == 401 || http.status == 403 || http.status == 404) {
        result.status = CallStatus::kFatal;
        result.error = fmt::format("{} {}: {}; {}", provider.Id(), request.url, failure,
                                   provider.FixHint(http.status));
        return finish(result);
      }
      if (!IsRetryableStatus(http.status)) {
        result.status = CallStatus::kFailed;
        result.error = failure;
        return finish(result);
      }
      if (auto it = http.headers.find("retry-after"); it != http.headers.end()) {
        retry_after = ParseRetryAfter(it->second, NowUnix());
      }
    }
    result.attempt_log.push_back(fmt::format("attempt {}: {}", attempt + 1, failure));
    result.error = failure;
    if (attempt + 1 >= policy.max_attempts) break;
    if (retry_after && *retry_after > policy.max_retry_after_seconds) {
      result.error = fmt::format("{} (the server asks to wait {:.0f} s, more than the {:.0f} s allowed)",
                                 failure, *retry_after, policy.max_retry_after_seconds);
      break;
    }
    sleep(BackoffSeconds(policy, attempt, retry_after, rng));
  }
  result.status = CallStatus::kFailed;
  result.error = fmt::format("gave up after {} attempts: {}", result.attempts, result.error);
  return finish(result);
}

}  // namespace kernelevolve::operators::llm

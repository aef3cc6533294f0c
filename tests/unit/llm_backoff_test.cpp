// Retry policy: which statuses are retried, Retry-After parsing, backoff bounds.
#include <gtest/gtest.h>

#include "operators/llm/retry_policy.h"

namespace kernelevolve::operators::llm {
namespace {

TEST(LlmBackoff, RetriesRateLimitsAndServerErrorsOnly) {
  for (int s : {408, 409, 429, 500, 502, 503, 504, 529}) EXPECT_TRUE(IsRetryableStatus(s)) << s;
  for (int s : {200, 400, 401, 403, 404, 413, 422}) EXPECT_FALSE(IsRetryableStatus(s)) << s;
}

TEST(LlmBackoff, ParsesRetryAfterSecondsAndHttpDates) {
  EXPECT_DOUBLE_EQ(*ParseRetryAfter("7", 0), 7.0);
  EXPECT_DOUBLE_EQ(*ParseRetryAfter(" 1.5 ", 0), 1.5);
  // Wed, 21 Oct 2015 07:28:00 GMT = 1445412480 (Unix time).
  EXPECT_DOUBLE_EQ(*ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470.0), 10.0);
  EXPECT_DOUBLE_EQ(*ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412490.0), 0.0);  // in the past
  EXPECT_FALSE(ParseRetryAfter("soon", 0));
  EXPECT_FALSE(ParseRetryAfter("-3", 0));
  EXPECT_FALSE(ParseRetryAfter("", 0));
}

TEST(LlmBackoff, JitterStaysWithinTheExponentialSchedule) {
  RetryPolicy p;
  p.base_delay_seconds = 1;
  p.max_delay_seconds = 10;
  p.jitter = 0.5;
  std::mt19937_64 rng(42);
  for (int k = 0; k < 8; ++k) {
    const double cap = std::min(10.0, std::pow(2.0, k));
    double lo = 1e9, hi = 0;
    for (int i = 0; i < 500; ++i) {
      const double d = BackoffSeconds(p, k, std::nullopt, rng);
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
    EXPECT_GE(lo, 0.5 * cap) << k;
    EXPECT_LE(hi, cap) << k;
    EXPECT_LT(lo, 0.6 * cap) << "jitter spreads the waits, retry " << k;
  }
}

TEST(LlmBackoff, RetryAfterIsAMinimum) {
  RetryPolicy p;
  std::mt19937_64 rng(1);
  EXPECT_GE(BackoffSeconds(p, 0, 5.0, rng), 5.0);  // server asks more than the schedule
  EXPECT_GE(BackoffSeconds(p, 6, 0.5, rng), 0.5 * 60 * 0.5);  // the schedule asks more
}

}  // namespace
}  // namespace kernelevolve::operators::llm

// The LLM client against the local fake server: both protocols, retries with
// Retry-After, hung and cut connections, malformed bodies, fatal errors, the cost guard.
#include <gtest/gtest.h>

#include <unistd.h>

#include "../llm_fake_server/fake_server_process.h"
#include "core/error.h"
#include "operators/llm/llm_client.h"

namespace kernelevolve::operators::llm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class LlmClientTest : public ::testing::Test {
 protected:
  fs::path Dir() {
    return fs::temp_directory_path() /
           ("ke_llm_client_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(Dir());  // kept after a failure: the fake server's log
  }
  std::unique_ptr<Provider> Make(const std::string& provider, const std::string& url, double timeout = 5,
                                 const char* key = "test-key", const std::string& model = "test-model") {
    ProviderConfig c;
    c.provider = provider;
    c.model = model;
    c.base_url = url;
    c.timeout_seconds = timeout;
    return MakeProvider(c, [key](const char*) { return key; });
  }
  CallResult Call(const Provider& p, int attempts = 4) {
    RetryPolicy policy;
    policy.max_attempts = attempts;
    ChatRequest chat{"system text", "# The problem: relu\nwrite it", 256, -1};
    return Complete(p, chat, policy, rng_, [this](double s) { waits_.push_back(s); }, nullptr);
  }
  std::mt19937_64 rng_{7};
  std::vector<double> waits_;
};

TEST_F(LlmClientTest, OpenAiRateLimitStormHonoursRetryAfterThenSucceeds) {
  testing_llm::FakeLlmServer server(
      {{"script", {{{"action", "429"}, {"retry_after", "3"}}, {{"action", "500"}}, {{"action", "ok"}}}}}, Dir());
  auto p = Make("openai", server.BaseUrl());
  CallResult r = Call(*p);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(r.attempts, 3);
  ASSERT_EQ(waits_.size(), 2u);
  EXPECT_GE(waits_[0], 3.0);  // Retry-After: 3
  EXPECT_LE(waits_[1], 2.0);  // second retry: 2 s schedule with jitter
  EXPECT_NE(r.response.text.find("kernelevolve_entry"), std::string::npos);
  auto served = server.Served();
  ASSERT_EQ(served.size(), 3u);
  EXPECT_EQ(r.response.input_tokens, served[2]["input_tokens"].get<int64_t>());
  EXPECT_EQ(r.response.output_tokens, served[2]["output_tokens"].get<int64_t>());
  EXPECT_NE(r.attempt_log[0].find("rate_limit_exceeded"), std::string::npos) << r.attempt_log[0];
}

TEST_F(LlmClientTest, HungConnectionTimesOutAndIsRetried) {
  testing_llm::FakeLlmServer server({{"script", {{{"action", "hang"}, {"seconds", 5}}, {{"action", "ok"}}}}}, Dir());
  auto p = Make("anthropic", server.BaseUrl(), 0.5);
  CallResult r = Call(*p);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_NE(r.attempt_log[0].find("timeout"), std::string::npos) << r.attempt_log[0];
  EXPECT_LT(r.seconds, 3.0);
  EXPECT_EQ(r.response.finish_reason, "end_turn");
}

TEST_F(LlmClientTest, MalformedAndTruncatedBodiesAreRetriedAndCounted) {
  testing_llm::FakeLlmServer server(
      {{"script", {{{"action", "malformed"}}, {{"action", "truncated"}}, {{"action", "529"}}, {{"action", "ok"}}}}},
      Dir());
  auto p = Make("anthropic", server.BaseUrl());
  CallResult r = Call(*p, 5);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(r.attempts, 4);
  EXPECT_EQ(r.unreadable_attempts, 2);
  EXPECT_NE(r.attempt_log[2].find("overloaded_error"), std::string::npos) << r.attempt_log[2];
}

TEST_F(LlmClientTest, BadKeyAndUnknownModelAreFatalWithTheFix) {
  testing_llm::FakeLlmServer server({{"script", json::array()}}, Dir());
  CallResult bad_key = Call(*Make("openai", server.BaseUrl(), 5, "wrong"));
  EXPECT_EQ(bad_key.status, CallStatus::kFatal);
  EXPECT_EQ(bad_key.attempts, 1);
  EXPECT_NE(bad_key.error.find("HTTP 401"), std::string::npos) << bad_key.error;
  EXPECT_NE(bad_key.error.find("OPENAI_API_KEY"), std::string::npos) << bad_key.error;
  CallResult no_model = Call(*Make("anthropic", server.BaseUrl(), 5, "test-key", "claude-nope"));
  EXPECT_EQ(no_model.status, CallStatus::kFatal);
  EXPECT_NE(no_model.error.find("not_found_error"), std::string::npos) << no_model.error;
  EXPECT_NE(no_model.error.find("no model 'claude-nope'"), std::string::npos) << no_model.error;
}

TEST_F(LlmClientTest, GivesUpAfterMaxAttemptsAndStopsWhenTheGuardRefuses) {
  testing_llm::FakeLlmServer server({{"script", json::array()}, {"default", {{"action", "status"}, {"code", 503}}}},
                                    Dir());
  auto p = Make("openai", server.BaseUrl());
  CallResult r = Call(*p, 3);
  EXPECT_EQ(r.status, CallStatus::kFailed);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_NE(r.error.find("gave up after 3 attempts"), std::string::npos) << r.error;
  RetryPolicy policy;
  ChatRequest chat{"s", "u", 10, -1};
  int guard_calls = 0;
  CallResult stopped = Complete(*p, chat, policy, rng_, [](double) {}, [&](int attempt) -> std::optional<std::string> {
    ++guard_calls;
    if (attempt == 1) return std::string("cost cap");
    return std::nullopt;
  });
  EXPECT_EQ(stopped.status, CallStatus::kStoppedByCap);
  EXPECT_EQ(stopped.attempts, 1);
  EXPECT_EQ(guard_calls, 2);
}

TEST_F(LlmClientTest, MissingKeyNamesTheVariableUnlessALocalUrlIsGiven) {
  ProviderConfig c;
  c.provider = "anthropic";
  c.model = "claude-sonnet-4-5";
  try {
    MakeProvider(c, [](const char*) -> const char* { return nullptr; });
    FAIL();
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("ANTHROPIC_API_KEY"), std::string::npos) << e.what();
  }
  c.base_url = "http://127.0.0.1:1/v1";
  EXPECT_NO_THROW(MakeProvider(c, [](const char*) -> const char* { return nullptr; }));
  EXPECT_EQ(JoinUrl("http://h:8000", "messages"), "http://h:8000/v1/messages");
  EXPECT_EQ(JoinUrl("http://h:8000/v1/", "chat/completions"), "http://h:8000/v1/chat/completions");
  EXPECT_EQ(ParseModelSpec("openai:llama3.1:8b").second, "llama3.1:8b");
  EXPECT_THROW(ParseModelSpec("gemini:pro"), core::InvalidInputError);
  EXPECT_THROW(ParseModelSpec("openai"), core::InvalidInputError);
}

}  // namespace
}  // namespace kernelevolve::operators::llm

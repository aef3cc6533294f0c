// Issue 21: the LLM operator's CUDA C++ protocol against the fake server, without a GPU.
// --target cuda cannot run here (its candidates need a GPU), so the operator is driven
// directly: the prompt asks for CUDA C++ (system message, ABI section with its example,
// ```cuda fence, the GPU facts), the fake server answers with its recorded .cu kernel,
// the parser accepts it, and the real nvcc (-arch=sm_90a, platforms::cuda::CudaBuilder)
// compiles it, and the ABI section's own example too. The compile steps are skipped,
// saying so, when nvcc is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../llm_fake_server/fake_server_process.h"
#include "core/error.h"
#include "operators/llm/llm_operator.h"
#include "operators/llm/response_parser.h"
#include "platforms/cuda/cuda_builder.h"
#include "store/store.h"

namespace kernelevolve::operators::llm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

core::Problem ReluProblem() {
  core::Problem p;
  p.name = "relu";
  p.source_path = fs::path(KE_SOURCE_DIR) / "problems/level1/relu.py";
  p.inputs = {{"input.0", core::TensorRole::kInput, {4, 1024}, core::DType::kFloat32}};
  p.outputs = {{"output.0", core::TensorRole::kOutput, {4, 1024}, core::DType::kFloat32}};
  p.eager_baseline.n = 10;
  p.eager_baseline.median_us = 9.5;
  p.threads = 1;
  return p;
}

std::string NvccOrEmpty() {
  try {
    return platforms::cuda::FindNvcc("");
  } catch (const core::InvalidInputError&) {
    return "";
  }
}

/// The body of the first ```<tag> block after `marker` in `text` ("" when none).
std::string BlockAfter(const std::string& text, const std::string& marker, const std::string& tag) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const size_t open = text.find("```" + tag + "\n", at);
  if (open == std::string::npos) return "";
  const size_t body = open + 4 + tag.size();
  const size_t close = text.find("\n```", body);
  return close == std::string::npos ? "" : text.substr(body, close - body + 1);
}

class LlmCudaProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ke_llm_cuda_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// An operator for --target cuda talking to `server` through the OpenAI protocol.
  std::unique_ptr<LlmOperator> MakeOperator(const testing_llm::FakeLlmServer& server, store::Store& store,
                                            int64_t run_id) {
    LlmOperatorOptions o;
    ProviderConfig config;
    config.provider = "openai";
    config.model = "test-model";
    config.base_url = server.BaseUrl();
    config.timeout_seconds = 30;
    config.connect_timeout_seconds = 5;
    o.providers.push_back(MakeProvider(config, [](const char*) -> const char* { return "test-key"; }));
    o.target = "cuda";
    GpuFacts gpu;
    gpu.device_name = "NVIDIA H200";
    gpu.capability = "9.0";
    gpu.sm_count = 132;
    gpu.l2_bytes = int64_t{60} << 20;
    gpu.shared_memory_per_block_optin = 232448;
    gpu.shared_memory_per_sm = 233472;
    gpu.copy_bandwidth_gbps = 4251;
    gpu.matmul_tflops = {{"float16", 761}, {"float32", 51}};
    o.hardware = DescribeGpu(gpu);
    o.calls_per_candidate = 1;
    return std::make_unique<LlmOperator>(std::move(o), store, run_id, nullptr);
  }

  fs::path dir_;
};

TEST_F(LlmCudaProtocolTest, PromptParserAndNvccAgreeOnACudaCandidate) {
  testing_llm::FakeLlmServer server({{"script", json::array()}, {"default", {{"action", "ok"}}}}, dir_ / "server");
  store::Store store = store::Store::Open(dir_ / "kernelevolve.db");
  store::RunRecord run;
  run.problem = "relu";
  run.target = "cuda";
  const int64_t run_id = store.CreateRun(run);
  auto op = MakeOperator(server, store, run_id);
  const core::Problem problem = ReluProblem();
  OperatorContext context;
  context.problem = &problem;
  context.threads = 1;
  const std::vector<core::Candidate> candidates = op->Propose(context, 1);
  ASSERT_EQ(candidates.size(), 1u);
  const core::Candidate& c = candidates[0];
  EXPECT_NE(c.source.find("__global__ void relu_kernel"), std::string::npos) << c.source;
  EXPECT_NE(c.source.find("// fake-server response 0"), std::string::npos);

  const auto calls = store.LoadLlmCalls(run_id);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].outcome, "ok");
  const std::string& prompt = calls[0].prompt_text;
  EXPECT_NE(prompt.find("fast, correct CUDA C++ kernels for\nNVIDIA GPUs"), std::string::npos) << prompt.substr(0, 400);
  EXPECT_NE(prompt.find("nvcc -O3 -std=c++17 -shared"), std::string::npos);
  EXPECT_NE(prompt.find("legacy default stream"), std::string::npos);
  EXPECT_NE(prompt.find("bool = {kDLUInt, 8, 1}"), std::string::npos);
  EXPECT_EQ(prompt.find("{kDLBool"), std::string::npos);
  EXPECT_NE(prompt.find("one fenced ```cuda block"), std::string::npos);
  EXPECT_NE(prompt.find("132 SMs, L2 60 MiB, shared memory 227 KiB per block (opt-in) / 228 KiB per SM"),
            std::string::npos);
  EXPECT_NE(prompt.find("device copy bandwidth 4251 GB/s"), std::string::npos);
  EXPECT_NE(prompt.find("float16 761 TFLOP/s"), std::string::npos);
  EXPECT_NE(prompt.find("per call on the GPU"), std::string::npos);

  const std::string example = BlockAfter(prompt, "A correct example of the ABI", "cuda");
  ASSERT_FALSE(example.empty()) << "no ```cuda example in the ABI section";
  const ParsedResponse parsed_example = ParseResponse("The example.\n\n```cuda\n" + example + "```\n", "",
                                                      CudaProtocol());
  EXPECT_TRUE(parsed_example.ok) << parsed_example.reason;

  const std::string nvcc = NvccOrEmpty();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found ($CUDACXX, PATH, /usr/local/cuda/bin): candidates not compiled";
  platforms::cuda::CudaBuilder builder(dir_ / "cuda_cache", nvcc, "sm_90a");
  const auto built = builder.Build(c);
  EXPECT_EQ(built.status, core::Status::kOk) << built.message << "\n" << built.log;
  core::Candidate from_example;
  from_example.source = parsed_example.source;
  const auto built_example = builder.Build(from_example);
  EXPECT_EQ(built_example.status, core::Status::kOk) << built_example.message << "\n" << built_example.log;
}

}  // namespace
}  // namespace kernelevolve::operators::llm

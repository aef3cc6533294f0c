// Issue 21: the LLM operator per target. Parsers of Triton and CUDA C++ answers, the
// bracket checks, and the prompts for cpu, triton and cuda (ABI with its example kernel,
// DLPack's bool as docs/abi.md has it, the problem's own tolerance, the GPU facts, the
// parent's roofline position and Nsight Compute diagnosis).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "operators/llm/context_memory.h"
#include "operators/llm/prompt_builder.h"
#include "operators/llm/response_parser.h"
#include "operators/llm/source_checks.h"
#include "profile_test_util.h"

namespace kernelevolve::operators::llm {
namespace {

namespace fs = std::filesystem;

const char* kTritonModule =
    "import torch\n"
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # a ) in a comment does not count\n"
    "    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=offs < n), 0.0), mask=offs < n)\n"
    "\n"
    "def kernelevolve_entry(inputs, outputs):\n"
    "    \"\"\"Launch: one program per 1024 elements (a ( in a docstring).\"\"\"\n"
    "    _relu[(triton.cdiv(inputs[0].numel(), 1024),)](inputs[0], outputs[0], inputs[0].numel(), BLOCK=1024)\n";

const char* kCudaKernel =
    "#include <dlpack/dlpack.h>\n"
    "__global__ void k(float* y) { y[threadIdx.x] = 0.0f; }\n"
    "extern \"C\" int kernelevolve_entry(const DLTensor* in, int32_t ni, DLTensor* out, int32_t no) {\n"
    "  k<<<1, 32>>>(static_cast<float*>(out[0].data));\n"
    "  return 0;\n"
    "}\n";

TEST(LlmTargetProtocol, TritonAnswersAreAPythonModuleWithJitKernels) {
  const ParsedResponse r = ParseResponse(
      std::string("One program per block of 1024.\n\n```python\n") + kTritonModule + "```\n", "", TritonProtocol());
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.source, kTritonModule);
  EXPECT_EQ(r.rationale, "One program per block of 1024.");
  // A C++ kernel for a Triton run names the fence it needed.
  const ParsedResponse cpp = ParseResponse(
      "```cpp\nextern \"C\" int kernelevolve_entry() { return 0; }\n```\n", "", TritonProtocol());
  EXPECT_FALSE(cpp.ok);
  EXPECT_NE(cpp.reason.find("--target triton takes ```python"), std::string::npos) << cpp.reason;
  const std::string no_jit = std::string(kTritonModule).replace(std::string(kTritonModule).find("@triton.jit"), 11,
                                                                "# no jit");
  EXPECT_NE(ParseResponse("```python\n" + no_jit + "```\n", "", TritonProtocol()).reason.find("no @triton.jit"),
            std::string::npos);
  const std::string torch_only = "import torch\ndef kernelevolve_entry(inputs, outputs):\n"
                                 "    outputs[0].copy_(torch.relu(inputs[0]))\n";
  EXPECT_NE(ParseResponse("```python\n" + torch_only + "```\n", "", TritonProtocol()).reason.find("no @triton.jit"),
            std::string::npos);
  const std::string cut = std::string(kTritonModule) + "def helper(:\n    \"\"\"never closed\n";
  EXPECT_NE(ParseResponse("```python\n" + cut + "```\n", "", TritonProtocol()).reason.find("unterminated triple"),
            std::string::npos);
}

TEST(LlmTargetProtocol, TritonEditsApplyToThePythonParent) {
  const ParsedResponse r = ParseResponse(
      "Wider blocks.\n<<<<<<< SEARCH\n    _relu[(triton.cdiv(inputs[0].numel(), 1024),)](inputs[0], outputs[0], "
      "inputs[0].numel(), BLOCK=1024)\n=======\n    _relu[(triton.cdiv(inputs[0].numel(), 4096),)](inputs[0], "
      "outputs[0], inputs[0].numel(), BLOCK=4096)\n>>>>>>> REPLACE\n",
      kTritonModule, TritonProtocol());
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.form, "edit");
  EXPECT_NE(r.source.find("BLOCK=4096"), std::string::npos);
}

TEST(LlmTargetProtocol, CudaAnswersNeedTheirOwnGlobalKernelsAndNoVendorLibrary) {
  for (const char* tag : {"cuda", "cu", "cpp"}) {
    const ParsedResponse r = ParseResponse(std::string("A kernel.\n\n```") + tag + "\n" + kCudaKernel + "```\n", "",
                                           CudaProtocol());
    EXPECT_TRUE(r.ok) << tag << ": " << r.reason;
  }
  const ParsedResponse cpu = ParseResponse(
      "```cpp\n#include <dlpack/dlpack.h>\nextern \"C\" int kernelevolve_entry() { return 0; }\n```\n", "",
      CudaProtocol());
  EXPECT_NE(cpu.reason.find("no __global__ kernel"), std::string::npos) << cpu.reason;
  const ParsedResponse cublas = ParseResponse(std::string("```cuda\n#include <cublas_v2.h>\n") + kCudaKernel + "```\n",
                                              "", CudaProtocol());
  EXPECT_NE(cublas.reason.find("vendor library"), std::string::npos) << cublas.reason;
  const ParsedResponse torch = ParseResponse(
      std::string("```cuda\n#include <ATen/ATen.h>\n") + kCudaKernel + "```\n", "", CudaProtocol());
  EXPECT_NE(torch.reason.find("PyTorch headers"), std::string::npos) << torch.reason;
  const ParsedResponse python = ParseResponse(std::string("```python\n") + kTritonModule + "```\n", "", CudaProtocol());
  EXPECT_NE(python.reason.find("--target cuda takes ```cuda"), std::string::npos) << python.reason;
}

TEST(LlmTargetProtocol, BracketChecksIgnoreCommentsAndLiterals) {
  EXPECT_EQ(CheckBalancePython("x = f('(', \"[\")  # }\ny = '''\n{\n'''\n"), "");
  EXPECT_EQ(CheckBalancePython("x = f(a, [b)\n"), "unbalanced ')'");
  EXPECT_EQ(CheckBalancePython("x = f(a,\n"), "unbalanced '(' (code cut short?)");
  EXPECT_EQ(CheckBalanceC("int f() { /* } */ return '}'; } // {\n"), "");
  EXPECT_EQ(CheckBalanceC("int f() {\n"), "unbalanced '{' (code cut short?)");
}

TEST(LlmTargetProtocol, UnknownTargetsAreRefused) {
  EXPECT_EQ(&ProtocolFor("triton"), &TritonProtocol());
  EXPECT_THROW(ProtocolFor("hip"), core::InvalidInputError);
}

core::Problem Bf16Problem() {
  core::Problem p;
  p.name = "matmul_bias_relu";
  p.source_path = fs::path(KE_SOURCE_DIR) / "problems/gpu_gemm/matmul_bias_relu.py";
  p.inputs = {{"input.0", core::TensorRole::kInput, {64, 32}, core::DType::kBFloat16},
              {"input.1", core::TensorRole::kInput, {48, 32}, core::DType::kBFloat16}};
  p.outputs = {{"output.0", core::TensorRole::kOutput, {64, 48}, core::DType::kBFloat16}};
  p.eager_baseline.n = 5;
  p.eager_baseline.median_us = 21.5;
  p.threads = 2;
  return p;
}

/// A correct parent at 42% of the copy bandwidth with an ncu profile.
search::Node ProfiledParent() {
  search::Node n;
  n.id = 7;
  n.candidate.source = kTritonModule;
  n.candidate.operator_name = "llm:openai:test-model";
  n.candidate.rationale = "one program per 1024";
  n.evaluation = testing_util::CorrectMemoryBound(0.42, 1.3);
  n.evaluation.fitness = 1.3;
  n.evaluation.latency.n = 5;
  n.evaluation.latency.median_us = 40;
  n.evaluation.roofline.arithmetic_intensity = 0.25;
  n.evaluation.roofline.achieved_gbps = 1785;
  n.evaluation.roofline.achieved_gflops = 446;
  n.profile = testing_util::OkNcuProfile(38, 45, 30, 20, 40, "long_scoreboard");
  return n;
}

Prompt PromptFor(const TargetProtocol& protocol, const core::Problem& p, const search::Node* parent,
                 const fs::path& dir = DefaultPromptDir()) {
  const PromptLibrary lib = PromptLibrary::Load(dir);
  OperatorContext c;
  c.problem = &p;
  c.parent = parent;
  c.threads = 2;
  PromptInputs in;
  in.context = &c;
  in.protocol = &protocol;
  in.tolerance_overrides = {{core::DType::kBFloat16, {3e-2, 2e-2}}};
  if (parent) in.diagnosis = Diagnose(*parent, p);
  GpuFacts gpu;
  gpu.device_name = "NVIDIA H200";
  gpu.capability = "9.0";
  gpu.sm_count = 132;
  gpu.l2_bytes = int64_t{60} << 20;
  gpu.copy_bandwidth_gbps = 4251;
  gpu.matmul_tflops = {{"bfloat16", 793}};
  in.hardware = protocol.target == "cpu" ? DescribeHardware("Test CPU", 8, 2, 21.5, 180) : DescribeGpu(gpu);
  return BuildPrompt(lib, in);
}

TEST(LlmTargetProtocol, TritonPromptCarriesTheAbiExampleToleranceGpuAndProfile) {
  const core::Problem p = Bf16Problem();
  const search::Node parent = ProfiledParent();
  const Prompt prompt = PromptFor(TritonProtocol(), p, &parent);
  EXPECT_EQ(prompt.version, "v2");
  EXPECT_NE(prompt.system.find("fast, correct Triton kernels"), std::string::npos) << prompt.system;
  EXPECT_NE(prompt.system.find("```python"), std::string::npos);
  const std::string& u = prompt.user;
  EXPECT_NE(u.find("def kernelevolve_entry(inputs, outputs): ..."), std::string::npos);
  EXPECT_NE(u.find("A correct example of the ABI"), std::string::npos);
  EXPECT_NE(u.find("_relu[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)"), std::string::npos);
  EXPECT_NE(u.find("must be one of this module's `@triton.jit`"), std::string::npos);
  EXPECT_NE(u.find("bfloat16: |out - ref| <= atol 0.03 + rtol 0.02 x |ref| (the problem's own TOLERANCE)"),
            std::string::npos) << u;
  EXPECT_NE(u.find("21.5 us per call on the GPU"), std::string::npos);
  EXPECT_NE(u.find("GPU: NVIDIA H200 (compute capability 9.0, 132 SMs, L2 60 MiB)"), std::string::npos) << u;
  EXPECT_NE(u.find("device copy bandwidth 4251 GB/s (read + write); torch.mm peaks bfloat16 793 TFLOP/s"),
            std::string::npos);
  EXPECT_NE(u.find("Roofline: memory-bound (0.25 FLOP/byte); achieved 1785.0 GB/s and 446.0 GFLOP/s = 42% of the "
                   "measured copy bandwidth."),
            std::string::npos) << u;
  EXPECT_NE(u.find("Hardware counters (Nsight Compute): "), std::string::npos);
  EXPECT_NE(u.find("long_scoreboard"), std::string::npos);
  EXPECT_NE(u.find("```python\nimport torch\nimport triton"), std::string::npos);  // the parent in its own fence
  EXPECT_NE(u.find("one fenced ```python block, or SEARCH/REPLACE edits"), std::string::npos);
  EXPECT_EQ(u.find("extern \"C\""), std::string::npos);
  EXPECT_EQ(u.find("OpenMP"), std::string::npos);
  EXPECT_EQ(u.find("{{"), std::string::npos);
}

TEST(LlmTargetProtocol, CpuAndCudaPromptsSpellBoolAsDocsAbiMd) {
  const core::Problem p = Bf16Problem();
  for (const TargetProtocol* protocol : {&CpuProtocol(), &CudaProtocol()}) {
    const std::string u = PromptFor(*protocol, p, nullptr).user;
    EXPECT_NE(u.find("bool = {kDLUInt, 8, 1}"), std::string::npos) << protocol->target;
    EXPECT_EQ(u.find("{kDLBool"), std::string::npos) << protocol->target;
    EXPECT_NE(u.find("A correct example of the ABI"), std::string::npos);
    EXPECT_NE(u.find("extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,"),
              std::string::npos);
  }
  const std::string cpu = PromptFor(CpuProtocol(), p, nullptr).user;
  EXPECT_NE(cpu.find("per call on 2 threads"), std::string::npos);
  EXPECT_NE(cpu.find("copy bandwidth 21.5 GB/s (read + write), float32 FMA peak 180.0 GFLOP/s"), std::string::npos);
  const std::string cuda = PromptFor(CudaProtocol(), p, nullptr).user;
  EXPECT_NE(cuda.find("__global__ void relu_kernel"), std::string::npos);
  EXPECT_NE(cuda.find("one fenced ```cuda block"), std::string::npos);
}

TEST(LlmTargetProtocol, PromptsSayWhatTheCheckerAllowsBeyondTheToleranceAndWhereTf32Follows) {
  core::Problem p = Bf16Problem();
  p.reference_tf32.conv = true;  // PyTorch's default, but the problem has not opted in
  const std::string plain = PromptFor(TritonProtocol(), p, nullptr).user;
  EXPECT_NE(plain.find("Float32 products must keep float32 accuracy against that exact reference (no plain TF32)"),
            std::string::npos)
      << plain;
  EXPECT_EQ(PromptFor(CpuProtocol(), p, nullptr).user.find("eager's own rounding error"),
            std::string::npos);
  p.reference_tf32.conv = false;
  p.eager_error_multiple = 8;  // EAGER_ERROR_MULTIPLE = 8
  const std::string cpu = PromptFor(CpuProtocol(), p, nullptr).user;
  EXPECT_NE(cpu.find("where float rounding moves elements by about the tolerance, each element's "
                     "tolerance adds 8 x eager's own rounding error at that element"),
            std::string::npos)
      << cpu;
  EXPECT_EQ(cpu.find("every such set on the GPU"), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("A float16 / bfloat16 output gets that allowance on the seed sets too"), std::string::npos)
      << cpu;
  EXPECT_EQ(cpu.find("TF32"), std::string::npos);
  const std::string strict = PromptFor(TritonProtocol(), p, nullptr).user;
  EXPECT_NE(strict.find("about the tolerance, and on every such set on the GPU (eager's error measured "
                        "there, TF32 included), each element's tolerance adds"),
            std::string::npos)
      << strict;
  EXPECT_NE(strict.find("The reference runs no float32 product in TF32"), std::string::npos) << strict;
  p.reference_tf32.conv = true;  // PyTorch's default
  const std::string conv = PromptFor(TritonProtocol(), p, nullptr).user;
  EXPECT_NE(conv.find("The reference runs its float32 convolutions in TF32 (torch.backends.cudnn.allow_tf32, "
                      "PyTorch's default), so tl.dot(..., input_precision=\"tf32\") is acceptable for those"),
            std::string::npos)
      << conv;
  p.reference_tf32.rnn = true;  // PyTorch's default too: cuDNN's recurrent layers
  const std::string rnn = PromptFor(TritonProtocol(), p, nullptr).user;
  EXPECT_NE(rnn.find("The reference runs its float32 convolutions and recurrent layers (nn.LSTM / GRU / RNN run "
                     "in cuDNN) in TF32 (torch.backends.cudnn.allow_tf32, PyTorch's default; "
                     "torch.backends.cudnn.rnn.fp32_precision)"),
            std::string::npos)
      << rnn;
  const std::string cuda = PromptFor(CudaProtocol(), p, nullptr).user;
  EXPECT_NE(cuda.find("so TF32 tensor-core MMA is acceptable for those"), std::string::npos) << cuda;
}

TEST(LlmTargetProtocol, PromptsV1ServeTheCpuOnly) {
  const core::Problem p = Bf16Problem();
  const fs::path v1 = fs::path(KE_SOURCE_DIR) / "prompts" / "v1";
  const Prompt cpu = PromptFor(CpuProtocol(), p, nullptr, v1);
  EXPECT_EQ(cpu.version, "v1");
  EXPECT_NE(cpu.user.find("extern \"C\" int kernelevolve_entry"), std::string::npos);
  try {
    PromptFor(TritonProtocol(), p, nullptr, v1);
    FAIL() << "prompts/v1 has no Triton ABI";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("no sections/abi_triton.md"), std::string::npos) << e.what();
  }
}

TEST(LlmTargetProtocol, GpuDescriptionUnderTheInterpreterSaysTimingsMeanNothing) {
  GpuFacts g;
  g.interpret = true;
  EXPECT_NE(DescribeGpu(g).find("TRITON_INTERPRET=1"), std::string::npos);
  EXPECT_NE(DescribeGpu(g).find("timings say nothing"), std::string::npos);
}

}  // namespace
}  // namespace kernelevolve::operators::llm

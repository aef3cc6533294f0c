// Prompt synthesis and the context-memory diagnosis.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "operators/llm/context_memory.h"
#include "operators/llm/prompt_builder.h"

namespace kernelevolve::operators::llm {
namespace {

namespace fs = std::filesystem;

core::Problem ReluProblem() {
  core::Problem p;
  p.name = "relu";
  p.source_path = fs::path(KE_SOURCE_DIR) / "problems/level1/relu.py";
  p.inputs = {{"input.0", core::TensorRole::kInput, {64, 16384}, core::DType::kFloat32}};
  p.outputs = {{"output.0", core::TensorRole::kOutput, {64, 16384}, core::DType::kFloat32}};
  p.eager_baseline.n = 10;
  p.eager_baseline.median_us = 812.5;
  p.threads = 2;
  p.overrides = {{"dim", "16384"}};
  return p;
}

search::Node MakeNode(int64_t id, core::Status status, const std::string& rationale) {
  search::Node n;
  n.id = id;
  n.candidate.source = "extern \"C\" int kernelevolve_entry() { return 0; } // node " + std::to_string(id);
  n.candidate.operator_name = "llm:openai:test-model";
  n.candidate.rationale = rationale;
  n.evaluation.status = status;
  n.evaluation.correct = status == core::Status::kOk;
  n.evaluation.message = status == core::Status::kOk ? "ok" : "compilation failed";
  n.evaluation.log_excerpt = "In function 'kernelevolve_entry':\nk.cpp:12:31: error: 'element_count' was not declared\n";
  n.evaluation.speedup_vs_eager.value = 1.5;
  n.evaluation.fitness = n.evaluation.correct ? 1.5 : 0;
  n.evaluation.latency.n = 5;
  n.evaluation.latency.median_us = 500;
  return n;
}

TEST(LlmPrompt, DraftPromptCarriesTheAbiTheTensorsAndTheReference) {
  PromptLibrary lib = PromptLibrary::Load(DefaultPromptDir());
  core::Problem p = ReluProblem();
  OperatorContext c;
  c.problem = &p;
  c.threads = 2;
  PromptInputs in;
  in.context = &c;
  in.hardware = DescribeHardware("Test CPU 9000", 8, 2);
  Prompt prompt = BuildPrompt(lib, in);
  EXPECT_EQ(prompt.version, "v2");
  EXPECT_NE(prompt.system.find("SEARCH"), std::string::npos);
  const std::string& u = prompt.user;
  EXPECT_NE(u.find("extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,"), std::string::npos);
  EXPECT_NE(u.find("inputs[0] `input.0`: float32 [64, 16384]"), std::string::npos) << u;
  EXPECT_NE(u.find("outputs[0] `output.0`: float32 [64, 16384]"), std::string::npos);
  EXPECT_NE(u.find("return torch.relu(x)"), std::string::npos);  // the reference source
  EXPECT_NE(u.find("812.5 us"), std::string::npos);
  EXPECT_NE(u.find("dim=16384"), std::string::npos);
  EXPECT_NE(u.find("Test CPU 9000 (8 logical CPUs; kernels run on 2 threads)"), std::string::npos);
  EXPECT_NE(u.find("from scratch"), std::string::npos);
  EXPECT_EQ(u.find("# The kernel to improve"), std::string::npos);  // no parent, no section
  EXPECT_EQ(u.find("{{"), std::string::npos);
}

TEST(LlmPrompt, RepairPromptShowsTheParentItsErrorSiblingsAndKnowledge) {
  PromptLibrary lib = PromptLibrary::Load(DefaultPromptDir());
  core::Problem p = ReluProblem();
  search::Node draft = MakeNode(1, core::Status::kOk, "scalar loop");
  search::Node parent = MakeNode(2, core::Status::kCompileError, "unrolled by 8");
  search::Node sibling = MakeNode(3, core::Status::kIncorrect, "tried AVX-512 masks");
  OperatorContext c;
  c.problem = &p;
  c.parent = &parent;
  c.lineage = {&draft, &parent};
  c.siblings = {&sibling};
  c.experiences = {"relu-like ops: vectorized loops with 2 threads reached 3x"};
  PromptInputs in;
  in.context = &c;
  in.diagnosis = Diagnose(parent, p);
  knowledge::Passage passage;
  passage.title = "Vectorizing elementwise loops";
  passage.heading = "Remainders";
  passage.document = "cpu/vectorize.md";
  passage.text = "Handle the tail with a masked store.";
  in.passages = {passage};
  const std::string u = BuildPrompt(lib, in).user;
  EXPECT_EQ(in.diagnosis.phase, "repair");
  EXPECT_EQ(in.diagnosis.bottleneck, "compile_error");
  EXPECT_NE(u.find("# The kernel to improve (node 2)"), std::string::npos);
  EXPECT_NE(u.find("compile_error (compilation failed)"), std::string::npos);
  EXPECT_NE(u.find("'element_count' was not declared"), std::string::npos);  // error excerpt
  EXPECT_NE(u.find("// node 2"), std::string::npos);                         // parent source
  EXPECT_NE(u.find("node 1 (llm:openai:test-model): scalar loop -> ok, 1.50x"), std::string::npos);
  EXPECT_NE(u.find("tried AVX-512 masks -> incorrect"), std::string::npos);  // sibling, not to repeat
  EXPECT_NE(u.find("do not repeat"), std::string::npos);
  EXPECT_NE(u.find("reached 3x"), std::string::npos);
  EXPECT_NE(u.find("Handle the tail with a masked store."), std::string::npos);
  EXPECT_NE(u.find("failed. Find the cause"), std::string::npos);
}

TEST(LlmPrompt, DiagnosisOfACorrectKernelNamesTheBottleneck) {
  core::Problem p = ReluProblem();
  search::Node ok = MakeNode(4, core::Status::kOk, "x");
  Diagnosis d = Diagnose(ok, p);
  EXPECT_EQ(d.phase, "optimize");
  EXPECT_EQ(d.bottleneck, "memory_bound");
  EXPECT_NE(d.headline.find("1.50x"), std::string::npos);
  // 2 x 64 x 16384 x 4 bytes in 500 us = 16.8 GB/s.
  EXPECT_NE(d.details.find("16.78 GB/s"), std::string::npos) << d.details;
  ok.evaluation.latency.median_us = 5;
  EXPECT_EQ(Diagnose(ok, p).bottleneck, "latency");
}

TEST(LlmPrompt, TemplatesWithUnknownPlaceholdersOrMissingFilesAreErrors) {
  fs::path dir = fs::temp_directory_path() / ("ke_prompts_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(DefaultPromptDir(), dir / "v9", fs::copy_options::recursive);
  PromptLibrary lib = PromptLibrary::Load(dir / "v9");
  EXPECT_EQ(lib.Version(), "v9");
  std::ofstream(dir / "v9" / "system.md") << "Hello {{nobody}}";
  EXPECT_THROW(PromptLibrary::Load(dir / "v9").Render("system", {}), core::InternalError);
  fs::remove(dir / "v9" / "candidate.md");
  EXPECT_THROW(PromptLibrary::Load(dir / "v9"), core::InvalidInputError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve::operators::llm

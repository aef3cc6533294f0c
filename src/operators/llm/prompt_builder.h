// Prompt synthesis: the system and user messages of an LLM call, assembled from the
// runtime context and the versioned template files under prompts/<version>/.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/problem.h"
#include "knowledge/retrieval.h"
#include "operators/llm/context_memory.h"
#include "operators/universal_operator.h"

namespace kernelevolve::operators::llm {

/// The template files of one prompt version (a folder such as prompts/v1).
class PromptLibrary {
 public:
  /// Loads every .md file of `dir` and of `dir`/sections (named "system",
  /// "sections/parent", ...). Throws InvalidInputError naming the folder when it is
  /// missing or lacks system.md, candidate.md or deep_search.md.
  static PromptLibrary Load(const std::filesystem::path& dir);
  /// The folder name, recorded with every call ("v1").
  const std::string& Version() const { return version_; }
  /// Renders template `name` with `vars`: every "{{key}}" is replaced by vars[key].
  /// Throws InternalError naming the file and the placeholder when a key is missing.
  std::string Render(const std::string& name, const std::map<std::string, std::string>& vars) const;

 private:
  std::map<std::string, std::string> templates_;
  std::filesystem::path dir_;
  std::string version_;
};

/// The default prompt folder: <source dir>/prompts/v1.
std::filesystem::path DefaultPromptDir();

/// Everything a prompt is synthesized from.
struct PromptInputs {
  const OperatorContext* context = nullptr;   // problem, parent, lineage, siblings, experiences
  std::string hardware;                       // DescribeHardware()
  std::vector<knowledge::Passage> passages;   // retrieved for this situation
  Diagnosis diagnosis;                        // of the parent (empty for drafts)
  bool deep_search = false;
  std::string stall;                          // deep search: why ("6 evaluations without improvement")
  int draft_index = 0;                        // drafts: which of the batch (asks for variety)
};

/// The two messages.
struct Prompt {
  std::string system;
  std::string user;
  std::string version;  // PromptLibrary::Version()
};

/// Assembles the prompt: task (draft / repair / optimize, from the context), the ABI,
/// the problem (reference source read from problem->source_path, overrides, every ABI
/// tensor with its shape and dtype, eager latency, tolerance, captured ATen ops), the
/// hardware, the parent with its outcome, diagnosis and source, the lineage and the
/// siblings (one line each: what was tried and how it ended), lessons of earlier runs
/// and the retrieved passages. Sections without content are left out. Throws
/// InternalError when context or its problem is null.
Prompt BuildPrompt(const PromptLibrary& library, const PromptInputs& inputs);

/// One line per node for lineage and sibling lists:
/// "node 7 (optimize, llm:openai:gpt-4.1): <rationale> -> ok, 1.85x".
std::string SummarizeNode(const search::Node& node);

/// CPU model, logical cores, threads used, and the vector ISA extensions from
/// /proc/cpuinfo that matter to a kernel (sse4_2, avx, avx2, fma, avx512f/bw/vl,
/// avx512_bf16, amx), e.g. "Intel Xeon ... (8 logical CPUs; kernels run on 2 threads);
/// ISA: avx2 fma avx512f".
std::string DescribeHardware(const std::string& cpu_model, int logical_cores, int threads);

}  // namespace kernelevolve::operators::llm

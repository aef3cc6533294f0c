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
#include "operators/llm/hardware_description.h"
#include "operators/llm/target_protocol.h"
#include "operators/universal_operator.h"

namespace kernelevolve::operators::llm {

/// The template files of one prompt version (a folder such as prompts/v1).
class PromptLibrary {
 public:
  /// Loads every .md file of `dir` and of `dir`/sections (named "system",
  /// "sections/parent", ...). Throws InvalidInputError naming the folder when it is
  /// missing or lacks system.md, candidate.md, deep_search.md or a common section.
  static PromptLibrary Load(const std::filesystem::path& dir);
  /// Whether template `name` was loaded.
  bool Has(const std::string& name) const { return templates_.count(name) > 0; }
  /// The ABI section template of `protocol` in this folder: its abi_template, else its
  /// legacy_abi_template (prompts/v1's "sections/abi", CPU only). Throws
  /// InvalidInputError naming the folder and the missing file (e.g. prompts/v1 with
  /// --target triton: v1 predates the GPU targets).
  std::string AbiTemplate(const TargetProtocol& protocol) const;
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

/// The default prompt folder: <source dir>/prompts/v2 (v1: the CPU-only prompts of
/// issue 7, kept for runs that name them).
std::filesystem::path DefaultPromptDir();

/// Everything a prompt is synthesized from.
struct PromptInputs {
  const OperatorContext* context = nullptr;   // problem, parent, lineage, siblings, experiences
  std::string hardware;                       // DescribeHardware() or DescribeGpu()
  const TargetProtocol* protocol = nullptr;   // the target's ABI and fences; null: CpuProtocol()
  /// The problem's own TOLERANCE per dtype (the fixtures' manifest); dtypes without
  /// one use eval::DefaultTolerance.
  std::map<core::DType, core::Tolerance> tolerance_overrides;
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

/// Assembles the prompt for the protocol's target: task (draft / repair / optimize, from
/// the context), the target's ABI with its example kernel, the problem (reference
/// source read from problem->source_path, overrides, every ABI tensor with its shape
/// and dtype, eager latency, the tolerance of each output dtype with the problem's own
/// overrides, captured ATen ops), the hardware, the parent with its outcome, roofline
/// position, diagnosis (with the Nsight Compute counters when it was profiled) and
/// source, the lineage and the siblings (one line each: what was tried and how it
/// ended), lessons of earlier runs and the retrieved passages. Sections without content
/// are left out. Throws InternalError when context or its problem is null;
/// InvalidInputError when the prompt folder has no ABI section for the target.
Prompt BuildPrompt(const PromptLibrary& library, const PromptInputs& inputs);

/// One line per node for lineage and sibling lists:
/// "node 7 (optimize, llm:openai:gpt-4.1): <rationale> -> ok, 1.85x".
std::string SummarizeNode(const search::Node& node);

}  // namespace kernelevolve::operators::llm

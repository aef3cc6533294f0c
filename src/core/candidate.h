// One kernel proposed by an operator, before it is built.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace kernelevolve::core {

struct Candidate {
  std::string source;        // full C++ translation unit (CPU target)
  std::string operator_name; // "template", "llm:<model>", "seed"
  std::string template_name; // e.g. "pointwise", "softmax_lastdim"; empty when not templated
  nlohmann::json knobs = nlohmann::json::object();  // template knob values
  std::string rationale;     // why this candidate exists (shown in reports)
};

/// How the rationale of a prior run's kernel, re-evaluated first on a warm start
/// (knowledge/warm_start.h), begins; the run table marks such nodes' parent "prior".
inline constexpr std::string_view kWarmStartRationalePrefix = "warm start: ";

/// Whether `c` is a warm start's prior kernel (its rationale begins with the prefix).
inline bool IsWarmStartSeed(const Candidate& c) { return c.rationale.starts_with(kWarmStartRationalePrefix); }

/// FNV-1a 64-bit of the text, as 16 lowercase hex digits. Used as a content hash for
/// deduplication and the build cache (not for security).
std::string ContentHash(const std::string& text);

/// ContentHash of a file's bytes; "" when the file cannot be read (to notice that a
/// problem file changed between a run and its resume: cli/run_config.h).
std::string FileContentHash(const std::filesystem::path& path);

}  // namespace kernelevolve::core

// `kernelevolve bench --sizes FILE` (issue 6): per-problem shape overrides, so that a
// suite whose files keep their CPU sizes runs at GPU sizes (problems/level1/gpu_sizes.json).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kernelevolve::cli {

/// Problem file stem -> (constant name -> value text, as --set takes it).
using ProblemSizes = std::map<std::string, std::map<std::string, std::string>>;

/// Reads a sizes file: a JSON object mapping a problem's file stem to an object of
/// module-level constants, e.g. {"softmax": {"batch_size": 8192, "dim": 4096}}. Values
/// are integers, numbers or strings (passed on as --set NAME=VALUE text); top-level
/// keys starting with '_' are comments. Every stem must name one of `problems` (the
/// suite's files). Throws InvalidInputError naming the file (and the entry) when it is
/// unreadable, not such an object, or names a problem the suite does not hold. Whether
/// each constant exists is checked when that problem loads (its own load error).
ProblemSizes LoadProblemSizes(const std::filesystem::path& file,
                              const std::vector<std::filesystem::path>& problems);

/// The --set list for one problem: the global `sets` ("NAME=VALUE"), with every name
/// that `sizes` also gives replaced by the per-problem value (the per-problem one wins),
/// then the per-problem names the global list lacks, in name order.
std::vector<std::string> MergeSets(const std::vector<std::string>& sets,
                                   const std::map<std::string, std::string>& sizes);

}  // namespace kernelevolve::cli

#include "cli/bench_sizes.h"

#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ValueText(const json& v, const fs::path& file, const std::string& stem,
                      const std::string& name) {
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return v.dump();
  if (v.is_string()) return v.get<std::string>();
  throw core::InvalidInputError(
      fmt::format("--sizes {}: \"{}\".\"{}\" must be a number or a string, got {}", file.string(),
                  stem, name, v.dump()));
}

}  // namespace

ProblemSizes LoadProblemSizes(const fs::path& file, const std::vector<fs::path>& problems) {
  std::ifstream in(file);
  if (!in)
    throw core::InvalidInputError(fmt::format("--sizes {}: cannot read the file", file.string()));
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw core::InvalidInputError(
        fmt::format("--sizes {}: not valid JSON: {}", file.string(), e.what()));
  }
  if (!doc.is_object()) {
    throw core::InvalidInputError(
        fmt::format("--sizes {}: expected an object mapping problem names to constants, e.g. "
                    "{{\"softmax\": {{\"batch_size\": 8192}}}}",
                    file.string()));
  }
  std::set<std::string> stems;
  for (const auto& p : problems) stems.insert(p.stem().string());
  ProblemSizes sizes;
  for (const auto& [stem, constants] : doc.items()) {
    if (!stem.empty() && stem.front() == '_') continue;  // a comment
    if (!stems.count(stem)) {
      const fs::path dir = problems.empty() ? fs::path() : problems.front().parent_path();
      throw core::InvalidInputError(
          fmt::format("--sizes {}: \"{}\" is not a problem of the suite {} (no {}.py there); fix "
                      "the name or remove the entry",
                      file.string(), stem, dir.string(), stem));
    }
    if (!constants.is_object()) {
      throw core::InvalidInputError(
          fmt::format("--sizes {}: \"{}\" must map to an object of constants, got {}",
                      file.string(), stem, constants.dump()));
    }
    auto& entry = sizes[stem];
    for (const auto& [name, value] : constants.items())
      entry[name] = ValueText(value, file, stem, name);
  }
  return sizes;
}

std::vector<std::string> MergeSets(const std::vector<std::string>& sets,
                                   const std::map<std::string, std::string>& sizes) {
  std::vector<std::string> merged;
  std::set<std::string> used;
  for (const auto& text : sets) {
    const std::string name = text.substr(0, text.find('='));
    auto it = sizes.find(name);
    if (it == sizes.end()) {
      merged.push_back(text);
    } else if (used.insert(name).second) {
      merged.push_back(name + "=" + it->second);
    }
  }
  for (const auto& [name, value] : sizes) {
    if (!used.count(name)) merged.push_back(name + "=" + value);
  }
  return merged;
}

}  // namespace kernelevolve::cli

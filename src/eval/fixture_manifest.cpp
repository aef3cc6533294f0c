#include "eval/fixture_manifest.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "eval/tolerance.h"

namespace kernelevolve::eval {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

core::TensorRole RoleFromName(const std::string& role, const std::string& where) {
  if (role == "input") return core::TensorRole::kInput;
  if (role == "parameter") return core::TensorRole::kParameter;
  if (role == "output") return core::TensorRole::kOutput;
  throw core::InvalidInputError(where + ": unknown role '" + role +
                                "' (expected input, parameter or output)");
}

std::string RoleName(core::TensorRole role) {
  switch (role) {
    case core::TensorRole::kInput: return "input";
    case core::TensorRole::kParameter: return "parameter";
    case core::TensorRole::kOutput: return "output";
  }
  return "input";
}

core::TensorSpec SpecFromJson(const json& doc, const std::string& where) {
  core::TensorSpec spec;
  spec.name = doc.at("name").get<std::string>();
  spec.role = RoleFromName(doc.at("role").get<std::string>(), where + " '" + spec.name + "'");
  spec.shape = doc.at("shape").get<std::vector<int64_t>>();
  for (int64_t d : spec.shape) {
    if (d < 0) throw core::InvalidInputError(where + " '" + spec.name + "': negative dimension");
  }
  spec.dtype = core::DTypeFromName(doc.at("dtype").get<std::string>());
  return spec;
}

std::vector<core::TensorSpec> SpecsFromJson(const json& list, const std::string& where) {
  std::vector<core::TensorSpec> specs;
  for (const auto& entry : list) specs.push_back(SpecFromJson(entry, where));
  return specs;
}

json SpecToJson(const core::TensorSpec& spec) {
  return {{"name", spec.name}, {"role", RoleName(spec.role)}, {"shape", spec.shape},
          {"dtype", core::DTypeName(spec.dtype)}};
}

/// Index of the output named `name`, or throws.
int OutputIndex(const FixtureManifest& m, const std::string& name, const std::string& where) {
  for (std::size_t i = 0; i < m.outputs.size(); ++i) {
    if (m.outputs[i].name == name) return static_cast<int>(i);
  }
  throw core::InvalidInputError(where + ": size_output '" + name + "' is not an output");
}

/// Reads "size_output" of every output and "set_shapes"; checks them against the specs.
void ReadShapeEntries(const json& doc, FixtureManifest& m, const std::string& where) {
  const json outputs = doc.at("outputs");
  for (std::size_t i = 0; i < m.outputs.size(); ++i) {
    int index = -1;
    if (outputs[i].contains("size_output")) {
      index = OutputIndex(m, outputs[i].at("size_output").get<std::string>(), where);
      const auto& size = m.outputs[static_cast<std::size_t>(index)];
      if (size.dtype != core::DType::kInt64 || size.shape != std::vector<int64_t>{static_cast<int64_t>(m.outputs[i].shape.size())}) {
        throw core::InvalidInputError(where + ": size_output of '" + m.outputs[i].name + "' must be int64[" +
                                      std::to_string(m.outputs[i].shape.size()) + "]");
      }
    }
    m.size_output.push_back(index);
  }
  if (!doc.contains("set_shapes")) return;
  for (const auto& entry : doc.at("set_shapes")) {
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const auto& [name, shape] : entry.items()) shapes[name] = shape.get<std::vector<int64_t>>();
    for (const auto* list : {&m.inputs, &m.outputs}) {
      for (const auto& spec : *list) {
        auto it = shapes.find(spec.name);
        if (it == shapes.end()) throw core::InvalidInputError(where + ": set_shapes lacks '" + spec.name + "'");
        if (it->second.size() != spec.shape.size()) {
          throw core::InvalidInputError(where + ": set_shapes gives '" + spec.name +
                                        "' another number of dimensions than its spec");
        }
        for (int64_t d : it->second) {
          if (d < 0) throw core::InvalidInputError(where + ": set_shapes '" + spec.name + "': negative dimension");
        }
      }
    }
    m.set_shapes.push_back(std::move(shapes));
  }
}

/// An allowance list (an edge entry's "allowance", an entry of "seed_allowance"):
/// distinct names of outputs of `m`, whose outputs are read already; throws naming
/// `where` and the bad value.
std::vector<std::string> AllowanceFromJson(const json& list, const FixtureManifest& m,
                                           const std::string& where) {
  if (!list.is_array()) {
    throw core::InvalidInputError(where + ": allowance must be a list of output names");
  }
  std::vector<std::string> names;
  for (const auto& item : list) {
    if (!item.is_string()) {
      throw core::InvalidInputError(where + ": allowance entry " + item.dump() +
                                    " must be an output name");
    }
    const std::string name = item.get<std::string>();
    const bool known = std::any_of(m.outputs.begin(), m.outputs.end(),
                                   [&](const core::TensorSpec& spec) { return spec.name == name; });
    if (!known) {
      throw core::InvalidInputError(where + ": allowance names '" + name +
                                    "', which is not an output");
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      throw core::InvalidInputError(where + ": allowance lists '" + name + "' twice");
    }
    names.push_back(name);
  }
  return names;
}

FixtureManifest ManifestFromJson(const json& doc, const fs::path& dir, const std::string& where) {
  FixtureManifest m;
  m.problem = doc.value("problem", "");
  m.inputs = SpecsFromJson(doc.at("inputs"), where + ": inputs");
  m.outputs = SpecsFromJson(doc.at("outputs"), where + ": outputs");
  m.seeds = doc.at("seeds").get<std::vector<int>>();
  for (const auto& f : doc.at("files")) m.files.push_back(dir / f.get<std::string>());
  for (const auto& e : doc.value("edge_cases", json::array())) {
    EdgeCaseFixture edge{e.at("name").get<std::string>(),
                         e.value("description", ""),
                         dir / e.at("file").get<std::string>(),
                         {},
                         {}};
    const json errors = e.value("reference_error", json::object());  // items() must not outlive it
    if (!errors.is_object()) throw core::InvalidInputError(where + ": edge case '" + edge.name + "': reference_error must be an object");
    for (const auto& [output, error] : errors.items()) {
      if (!error.is_number()) {
        throw core::InvalidInputError(where + ": edge case '" + edge.name + "': reference_error." + output + " must be a number");
      }
      const double value = error.get<double>();
      if (!(value >= 0) || !std::isfinite(value)) {
        throw core::InvalidInputError(where + ": edge case '" + edge.name + "': reference_error." + output +
                                      " must be a finite number >= 0");
      }
      edge.reference_error[output] = value;
    }
    if (e.contains("allowance")) {
      edge.allowance = AllowanceFromJson(e.at("allowance"), m, where + ": edge case '" + edge.name + "'");
    }
    m.edge_cases.push_back(std::move(edge));
  }
  if (doc.contains("seed_allowance")) {
    const json& lists = doc.at("seed_allowance");
    if (!lists.is_array()) throw core::InvalidInputError(where + ": seed_allowance must be a list (one per file)");
    for (std::size_t k = 0; k < lists.size(); ++k) {
      m.seed_allowance.push_back(AllowanceFromJson(lists[k], m, where + ": seed_allowance[" + std::to_string(k) + "]"));
    }
  }
  m.eager_error_multiple = doc.value("eager_error_multiple", 0.0);
  if (!(m.eager_error_multiple >= 0) || !std::isfinite(m.eager_error_multiple)) {
    throw core::InvalidInputError(where + ": eager_error_multiple must be a finite number >= 0");
  }
  for (const auto& e : doc.value("edge_skipped", json::array())) {
    m.edge_skipped.emplace_back(e.at("name").get<std::string>(), e.value("reason", ""));
  }
  ReadShapeEntries(doc, m, where);
  if (doc.contains("tolerance")) {
    for (const auto& [name, tol] : doc.at("tolerance").items()) {
      core::Tolerance t;
      t.atol = tol.at("atol").get<double>();
      t.rtol = tol.at("rtol").get<double>();
      if (!(t.atol >= 0) || !(t.rtol >= 0)) {
        throw core::InvalidInputError(where + ": tolerance." + name + ": atol and rtol must be >= 0");
      }
      m.tolerance_overrides[core::DTypeFromName(name)] = t;
    }
  }
  return m;
}

}  // namespace

std::vector<core::TensorSpec> FixtureManifest::InputsOf(std::size_t file) const {
  std::vector<core::TensorSpec> specs = inputs;
  if (file < set_shapes.size()) {
    for (auto& spec : specs) spec.shape = set_shapes[file].at(spec.name);
  }
  return specs;
}

std::vector<core::TensorSpec> FixtureManifest::OutputsOf(std::size_t file) const {
  std::vector<core::TensorSpec> specs = outputs;
  if (file < set_shapes.size()) {
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (size_output[i] < 0) specs[i].shape = set_shapes[file].at(specs[i].name);
    }
  }
  return specs;
}

core::Tolerance FixtureManifest::ToleranceFor(core::DType dtype) const {
  auto it = tolerance_overrides.find(dtype);
  return it != tolerance_overrides.end() ? it->second : DefaultTolerance(dtype);
}

double EdgeCaseFixture::ReferenceError(const std::string& output) const {
  auto it = reference_error.find(output);
  return it == reference_error.end() ? 0.0 : it->second;
}

namespace {

/// True when the allowance list `names` names `output`.
bool Lists(const std::vector<std::string>& names, const std::string& output) {
  return std::find(names.begin(), names.end(), output) != names.end();
}

}  // namespace

bool EdgeCaseFixture::HasAllowance(const std::string& output) const { return Lists(allowance, output); }

bool FixtureManifest::SeedHasAllowance(std::size_t file, const std::string& output) const {
  return file < seed_allowance.size() && Lists(seed_allowance[file], output);
}

std::string AllowanceTensorName(const std::string& output) { return "allowance." + output; }

FixtureManifest ReadFixtureManifest(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw core::IoError("cannot read fixture manifest " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  const std::string where = path.string();
  FixtureManifest m;
  try {
    m = ManifestFromJson(json::parse(text.str()), fs::absolute(path).parent_path(), where);
  } catch (const json::exception& e) {
    throw core::InvalidInputError(where + ": malformed manifest: " + e.what());
  } catch (const core::InvalidInputError& e) {
    throw core::InvalidInputError(where + ": " + e.what());
  }
  if (m.seeds.size() != m.files.size()) {
    throw core::InvalidInputError(where + ": 'seeds' has " + std::to_string(m.seeds.size()) +
                                  " entries but 'files' has " + std::to_string(m.files.size()));
  }
  if (m.files.empty()) throw core::InvalidInputError(where + ": 'files' is empty; regenerate the fixtures");
  if (m.outputs.empty()) throw core::InvalidInputError(where + ": 'outputs' is empty");
  if (!m.set_shapes.empty() && m.set_shapes.size() != m.files.size()) {
    throw core::InvalidInputError(where + ": 'set_shapes' has " + std::to_string(m.set_shapes.size()) +
                                  " entries but 'files' has " + std::to_string(m.files.size()));
  }
  if (!m.seed_allowance.empty() && m.seed_allowance.size() != m.files.size()) {
    throw core::InvalidInputError(where + ": 'seed_allowance' has " + std::to_string(m.seed_allowance.size()) +
                                  " entries but 'files' has " + std::to_string(m.files.size()));
  }
  return m;
}

json FixtureManifestToJson(const FixtureManifest& m, const fs::path& manifest_dir) {
  json inputs = json::array(), outputs = json::array(), files = json::array();
  for (const auto& s : m.inputs) inputs.push_back(SpecToJson(s));
  for (std::size_t i = 0; i < m.outputs.size(); ++i) {
    outputs.push_back(SpecToJson(m.outputs[i]));
    if (i < m.size_output.size() && m.size_output[i] >= 0) {
      outputs.back()["size_output"] = m.outputs[static_cast<std::size_t>(m.size_output[i])].name;
    }
  }
  auto relative = [&](const fs::path& f) {
    auto rel = f.lexically_relative(manifest_dir);
    bool inside = !rel.empty() && rel.begin()->string() != "..";
    return inside ? rel.string() : f.string();
  };
  for (const auto& f : m.files) files.push_back(relative(f));
  json doc = {{"problem", m.problem}, {"inputs", inputs}, {"outputs", outputs},
              {"seeds", m.seeds},     {"files", files}};
  if (!m.edge_cases.empty()) {
    json edges = json::array();
    for (const auto& e : m.edge_cases) {
      json entry = {{"name", e.name}, {"file", relative(e.file)}, {"description", e.description}};
      if (!e.reference_error.empty()) entry["reference_error"] = e.reference_error;
      if (!e.allowance.empty()) entry["allowance"] = e.allowance;
      edges.push_back(std::move(entry));
    }
    doc["edge_cases"] = edges;
  }
  doc["eager_error_multiple"] = m.eager_error_multiple;  // always, as the worker writes it
  if (!m.edge_skipped.empty()) {
    json skipped = json::array();
    for (const auto& [name, reason] : m.edge_skipped) skipped.push_back({{"name", name}, {"reason", reason}});
    doc["edge_skipped"] = skipped;
  }
  if (!m.set_shapes.empty()) doc["set_shapes"] = m.set_shapes;
  if (!m.seed_allowance.empty()) doc["seed_allowance"] = m.seed_allowance;
  if (!m.tolerance_overrides.empty()) {
    json tol = json::object();
    for (const auto& [dtype, t] : m.tolerance_overrides) {
      tol[std::string(core::DTypeName(dtype))] = {{"atol", t.atol}, {"rtol", t.rtol}};
    }
    doc["tolerance"] = tol;
  }
  return doc;
}

}  // namespace kernelevolve::eval

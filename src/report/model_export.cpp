#include "report/model_export.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/candidate.h"
#include "core/dtype.h"
#include "core/error.h"
#include "eval/fixture_manifest.h"
#include "report/python_literal.h"
#include "report/run_summary.h"

namespace kernelevolve::report {
namespace {

namespace fs = std::filesystem;
using core::InvalidInputError;

/// Everything of a run that model_new.py is made from.
struct RunForExport {
  fs::path run_dir;
  std::string problem;  // manifest "problem": the file stem
  std::string target;   // cpu | triton
  int64_t node_id = -1;
  std::string speedup_line;  // "confirmed 1.52x eager [1.40, 1.61]" or "search speedup 1.3x eager"
  fs::path kernel_path;
  std::string kernel_source;
  fs::path problem_path;
  std::string problem_source;
  eval::FixtureManifest manifest;
  nlohmann::json overrides;  // {"NAME": "VALUE"} as given to --set
};

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInputError(fmt::format("cannot read {}", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json ReadJson(const fs::path& path) {
  try {
    return nlohmann::json::parse(ReadText(path));
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInputError(fmt::format("{} is not valid JSON: {}", path.string(), e.what()));
  }
}

std::string SpeedupLine(const nlohmann::json& best) {
  const nlohmann::json confirmed = best.value("confirmed", nlohmann::json::object());
  if (confirmed.value("done", false)) {
    const auto ci = confirmed.value("ci95", std::vector<double>{});
    return ci.size() == 2
               ? fmt::format("confirmed {:.2f}x eager, 95% interval [{:.2f}, {:.2f}]",
                             confirmed.value("speedup_vs_eager", 0.0), ci[0], ci[1])
               : fmt::format("confirmed {:.2f}x eager", confirmed.value("speedup_vs_eager", 0.0));
  }
  return fmt::format("search speedup {:.2f}x eager, not confirmed",
                     best.value("speedup_vs_eager", 0.0));
}

/// The problem file: the manifest's absolute source_path, else result.json's problem_path.
fs::path ProblemFile(const nlohmann::json& manifest, const nlohmann::json& result,
                     const fs::path& where) {
  for (const std::string& path : {manifest.value("source_path", std::string()),
                                  result.value("problem_path", std::string())}) {
    if (!path.empty() && fs::is_regular_file(path)) return path;
  }
  throw InvalidInputError(fmt::format(
      "{}: the problem file {} no longer exists; the export embeds its Model, so restore it first",
      where.string(),
      manifest.value("source_path", result.value("problem_path", std::string("?")))));
}

RunForExport ReadRun(const fs::path& run_dir) {
  if (!fs::is_directory(run_dir))
    throw InvalidInputError(fmt::format("{}: no such run directory", run_dir.string()));
  const fs::path result_path = run_dir / "result.json";
  if (!fs::is_regular_file(result_path)) {
    if (fs::is_regular_file(run_dir / "bench.json")) {
      throw InvalidInputError(fmt::format(
          "{} is a bench directory; export one of its problems' runs, {}/PROBLEM", run_dir.string(),
          run_dir.string()));
    }
    if (fs::is_regular_file(run_dir / "kernelevolve.db")) {
      throw InvalidInputError(fmt::format(
          "{}: the run is unfinished (no result.json yet: it was interrupted, or is still running); "
          "`kernelevolve resume {}` finishes it, then export",
          run_dir.string(), run_dir.string()));
    }
    throw InvalidInputError(
        fmt::format("{} is not a kernelevolve run (no result.json; `kernelevolve optimize --out "
                    "DIR` writes one)",
                    run_dir.string()));
  }
  const nlohmann::json result = ReadJson(result_path);
  RunForExport run;
  run.run_dir = run_dir;
  run.target = result.value("target", std::string("cpu"));
  const nlohmann::json best = result.value("best", nlohmann::json());
  if (result.value("status", std::string()) != "ok" || !best.is_object()) {
    throw InvalidInputError(
        fmt::format("{}: the run found no correct kernel (status {}); nothing to export",
                    run_dir.string(), result.value("status", std::string("unknown"))));
  }
  if (run.target != "cpu" && run.target != "triton") {
    throw InvalidInputError(
        fmt::format("{}: exporting a --target {} run is not supported (cpu and triton are)",
                    run_dir.string(), run.target));
  }
  run.node_id = best.value("node_id", int64_t{-1});
  run.speedup_line = SpeedupLine(best);
  run.kernel_path = run_dir / (run.target == "cpu" ? "best_kernel.cpp" : "best_kernel.py");
  if (!fs::is_regular_file(run.kernel_path)) {
    throw InvalidInputError(fmt::format("{}: the best kernel {} is missing", run_dir.string(),
                                        run.kernel_path.string()));
  }
  run.kernel_source = ReadText(run.kernel_path);
  const fs::path manifest_path = run_dir / "fixtures" / "manifest.json";
  if (!fs::is_regular_file(manifest_path)) {
    throw InvalidInputError(fmt::format("{}: {} is missing (it records the kernel's tensors)",
                                        run_dir.string(), manifest_path.string()));
  }
  run.manifest = eval::ReadFixtureManifest(manifest_path);
  run.problem = run.manifest.problem;
  const nlohmann::json raw_manifest = ReadJson(manifest_path);
  run.overrides = raw_manifest.value("overrides", nlohmann::json::object());
  run.problem_path = ProblemFile(raw_manifest, result, run_dir);
  run.problem_source = ReadText(run.problem_path);
  return run;
}

/// The problem name as a Python identifier fragment: [A-Za-z0-9_], never starting with a digit.
std::string Identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "p" + out;
  return out;
}

/// `(name, shape, dtype)` tuples of the manifest's tensors with `role`, in ABI order;
/// parameters are named by their state_dict key (the name without "param.").
std::string SpecList(const std::vector<core::TensorSpec>& specs, core::TensorRole role) {
  std::vector<std::string> items;
  for (const auto& s : specs) {
    if (s.role != role) continue;
    const std::string name = role == core::TensorRole::kParameter && s.name.starts_with("param.")
                                 ? s.name.substr(6)
                                 : s.name;
    const std::string dtype = PyShortString(std::string(core::DTypeName(s.dtype)));
    items.push_back(
        role == core::TensorRole::kOutput
            ? fmt::format("({}, {})", PyIntList(s.shape), dtype)
            : fmt::format("({}, {}, {})", PyShortString(name), PyIntList(s.shape), dtype));
  }
  if (items.empty()) return "[]";
  return fmt::format("[\n    {},\n]", fmt::join(items, ",\n    "));
}

/// `[(input shapes, output shapes), ...]`, one per fixture file, when the run's sets had
/// other shapes than the first (manifest set_shapes); "[]" otherwise.
std::string ShapeSets(const eval::FixtureManifest& manifest) {
  if (!manifest.ShapesVary()) return "[]";
  std::vector<std::string> sets;
  for (std::size_t file = 0; file < manifest.files.size(); ++file) {
    std::vector<std::string> ins, outs;
    for (const auto& s : manifest.InputsOf(file)) ins.push_back(PyIntList(s.shape));
    for (const auto& s : manifest.OutputsOf(file)) outs.push_back(PyIntList(s.shape));
    const std::string item = fmt::format("([{}], [{}])", fmt::join(ins, ", "), fmt::join(outs, ", "));
    if (std::find(sets.begin(), sets.end(), item) == sets.end()) sets.push_back(item);
  }
  return fmt::format("[\n    {},\n]", fmt::join(sets, ",\n    "));
}

std::string ToleranceDict(const eval::FixtureManifest& manifest) {
  std::set<core::DType> dtypes;
  for (const auto& s : manifest.outputs) dtypes.insert(s.dtype);
  std::vector<std::string> items;
  for (core::DType d : dtypes) {
    const core::Tolerance t = manifest.ToleranceFor(d);
    items.push_back(fmt::format("{}: ({}, {})", PyShortString(std::string(core::DTypeName(d))),
                                PyFloat(t.atol), PyFloat(t.rtol)));
  }
  return fmt::format("{{{}}}", fmt::join(items, ", "));
}

std::string OverridesDict(const nlohmann::json& overrides) {
  std::vector<std::string> items;
  for (const auto& [key, value] : overrides.items()) {
    items.push_back(
        fmt::format("{}: {}", PyShortString(key),
                    PyShortString(value.is_string() ? value.get<std::string>() : value.dump())));
  }
  return fmt::format("{{{}}}", fmt::join(items, ", "));
}

/// Replaces every {{NAME}} of `text` in one pass (inserted values are never scanned
/// again, so sources may contain braces). Throws InternalError on a name not in `values`.
std::string Fill(const std::string& text, const std::map<std::string, std::string>& values,
                 const fs::path& file) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const std::size_t close = text.find("}}", open);
    if (close == std::string::npos) break;
    const std::string name = text.substr(open + 2, close - open - 2);
    auto it = values.find(name);
    if (it == values.end())
      throw core::InternalError(
          fmt::format("{}: unknown placeholder {{{{{}}}}}", file.string(), name));
    out += text.substr(pos, open - pos) + it->second;
    pos = close + 2;
  }
  return out + text.substr(pos);
}

std::string ReadTemplate(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::IoError(fmt::format("export template {} is missing", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string RenderModelNew(const RunForExport& run, const std::string& op_name,
                           const fs::path& template_dir, const std::vector<std::string>& cpu_flags) {
  std::vector<std::string> flags;
  for (const auto& f : cpu_flags) flags.push_back(PyShortString(f));
  std::map<std::string, std::string> values = {
      {"PROBLEM", run.problem},
      {"RUN_DIR", fs::absolute(run.run_dir).lexically_normal().string()},
      {"NODE_ID", std::to_string(run.node_id)},
      {"TARGET", run.target},
      {"SPEEDUP", run.speedup_line},
      {"OP_NAME", op_name},
      {"KERNEL_FILE", run.kernel_path.filename().string()},
      {"PROBLEM_LITERAL", PyShortString(run.problem)},
      {"TARGET_LITERAL", PyShortString(run.target)},
      {"OP_NAME_LITERAL", PyShortString(op_name)},
      {"INPUTS", SpecList(run.manifest.inputs, core::TensorRole::kInput)},
      {"PARAMETERS", SpecList(run.manifest.inputs, core::TensorRole::kParameter)},
      {"OUTPUTS", SpecList(run.manifest.outputs, core::TensorRole::kOutput)},
      {"SHAPE_SETS", ShapeSets(run.manifest)},
      {"OVERRIDES", OverridesDict(run.overrides)},
      {"TOLERANCE", ToleranceDict(run.manifest)},
      {"PROBLEM_SOURCE", PyLongString(run.problem_source)},
      {"KERNEL_SOURCE", PyLongString(run.kernel_source)},
      {"CXX_FLAGS", fmt::format("[{}]", fmt::join(flags, ", "))},
  };
  const fs::path loader =
      template_dir / (run.target == "cpu" ? "cpu_kernel.py.in" : "triton_kernel.py.in");
  values["KERNEL_LOADER"] = Fill(ReadTemplate(loader), values, loader);
  const fs::path main = template_dir / "model_new.py.in";
  return Fill(ReadTemplate(main), values, main);
}

}  // namespace

fs::path DefaultExportTemplateDir() { return fs::path(KE_SOURCE_DIR) / "export"; }

ExportedModel ExportRun(const fs::path& run_dir, const fs::path& out_dir,
                        const fs::path& template_dir, const std::vector<std::string>& cpu_flags) {
  const RunForExport run = ReadRun(run_dir);
  ExportedModel out;
  out.target = run.target;
  // One op per (kernel, problem, overrides): two exports load side by side in one process.
  out.op_name =
      Identifier(run.problem) + "_" +
      core::ContentHash(run.kernel_source + "\n" + run.problem_source + "\n" + run.overrides.dump())
          .substr(0, 12);
  const std::string model = RenderModelNew(run, out.op_name, template_dir, cpu_flags);
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir)) {
    throw InvalidInputError(fmt::format("cannot create --out {}: {}", out_dir.string(),
                                        ec ? ec.message() : "not a directory"));
  }
  out.model_path = out_dir / "model_new.py";
  out.kernel_path = out_dir / run.kernel_path.filename();
  out.problem_path = out_dir / "problem.py";
  WriteTextAtomic(out.kernel_path, run.kernel_source);
  WriteTextAtomic(out.problem_path, run.problem_source);
  WriteTextAtomic(out.model_path, model);
  return out;
}

}  // namespace kernelevolve::report

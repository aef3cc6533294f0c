// The fixtures' manifest.json, written by the Python worker
// (worker/kernelevolve_worker/fixtures.py) and read by the native harnesses.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/problem.h"
#include "core/tensor_spec.h"

namespace kernelevolve::eval {

/// manifest.json:
///   {"problem": "relu",
///    "inputs":  [{"name": "input.0", "role": "input"|"parameter", "shape": [64, 16384],
///                 "dtype": "float32"}, ...],            // ABI input order (docs/abi.md)
///    "outputs": [{"name": "output.0", "role": "output", "shape": [...], "dtype": ...}],
///    "seeds": [0, 1, 2],
///    "files": ["seed_0.safetensors", ...],              // relative to the manifest's folder
///    "tolerance": {"float32": {"atol": 1e-4, "rtol": 1e-4}},   // optional overrides
///    "edge_cases": [{"name": "large", "file": "edge_large.safetensors",
///                    "description": "float inputs scaled by 10000",
///                    "reference_error": {"output.0": 512.0},          // optional
///                    "allowance": ["output.0"]}],                     // optional
///    "eager_error_multiple": 8,                                       // optional, default 0
///    "edge_skipped": [{"name": "zeros", "reason": "..."}],            // optional
///    "seed_allowance": [["output.0"], [], ...],   // optional, one list per file
///    "set_shapes": [{"input.0": [517], "output.0": [8, 64], ...}, ...]}  // optional
/// "set_shapes" (one object per file, same order as "files") is written when the seeds
/// give tensors of different sizes or an output is bounded; "inputs" and "outputs" then
/// hold the first seed's shapes. A bounded output (data-dependent shape, docs/abi.md) has
/// "shape" = its bound and "size_output": "output.<k>.size", the int64 [ndim] output the
/// kernel fills with the actual shape; set_shapes holds the actual shape per file.
/// An edge-case file holds, beside "input.N" and "output.N", for each output listed in
/// its "allowance" a tensor "allowance.output.N" (AllowanceTensorName): float32, the
/// reference's shape, values >= 0 and finite, eager PyTorch's float rounding error scale
/// at each element in the output's units (0 where eager is insensitive, e.g. a relu's
/// clipped zeros); the harness widens that element's tolerance by eager_error_multiple
/// times it (eval::ElementAllowance). "eager_error_multiple" is the problem's
/// EAGER_ERROR_MULTIPLE: the worker writes it always (8 by default, 0 when the problem
/// opts out); absent reads as 0 (no allowance). A seed file holds such a tensor for each
/// output its "seed_allowance" entry lists: the worker writes them for float16 / bfloat16
/// outputs, whose tolerance is about one unit in the last place, so that a kernel
/// rounding a chain in another order than eager passes where an intermediate cancels
/// (worker session._half_seed_allowance).
/// Other keys (source_path, overrides) are ignored by the harness. Edge-case sets are
/// the first seed's inputs pushed to extreme values (worker/kernelevolve_worker/edge_cases.py);
/// each is checked once, never used for timing.
struct EdgeCaseFixture {
  std::string name;                // "zeros", "negative", "large", "tiny"
  std::string description;         // how the set is built, one line
  std::filesystem::path file;      // absolute
  /// Output name -> eager PyTorch's own max abs error on this set against its float64
  /// reference (edge_cases.reference_error, in the output's units); absent means 0.
  /// Only for messages: the tolerance follows `allowance`.
  std::map<std::string, double> reference_error;
  /// Names of the outputs whose per-element allowance tensor (AllowanceTensorName) the
  /// file holds; each names an output of the manifest, at most once.
  std::vector<std::string> allowance;

  /// reference_error of `output`, 0 when absent.
  double ReferenceError(const std::string& output) const;
  /// True when `allowance` lists `output`.
  bool HasAllowance(const std::string& output) const;
};

/// Name of the per-element allowance tensor of `output` in an edge-case file:
/// "allowance.output.0" for "output.0".
std::string AllowanceTensorName(const std::string& output);

struct FixtureManifest {
  std::string problem;
  std::vector<core::TensorSpec> inputs;    // forward() args, then state_dict() entries
  std::vector<core::TensorSpec> outputs;
  std::vector<int> seeds;
  std::vector<std::filesystem::path> files;  // absolute, one per seed
  std::map<core::DType, core::Tolerance> tolerance_overrides;
  std::vector<EdgeCaseFixture> edge_cases;
  /// Edge-case sets the worker did not write, with why: (name, reason).
  std::vector<std::pair<std::string, std::string>> edge_skipped;
  /// Per file (files order): ABI name -> shape on that file; empty when every file has
  /// the shapes of `inputs` and `outputs`.
  std::vector<std::map<std::string, std::vector<int64_t>>> set_shapes;
  /// Per output (outputs order): index in `outputs` of its size tensor when the output is
  /// bounded, else -1.
  std::vector<int> size_output;
  /// Per file (files order), or empty: the outputs whose per-element allowance tensor
  /// (AllowanceTensorName) that seed file holds.
  std::vector<std::vector<std::string>> seed_allowance;

  /// True when seed_allowance lists `output` for file `file`.
  bool SeedHasAllowance(std::size_t file, const std::string& output) const;

  /// Inputs as given to the kernel on file `file` (shapes from set_shapes when present).
  std::vector<core::TensorSpec> InputsOf(std::size_t file) const;
  /// Output buffers on file `file`: a bounded output at its bound, others at that file's
  /// shapes.
  std::vector<core::TensorSpec> OutputsOf(std::size_t file) const;
  /// True when some file has other shapes than the first, or an output is bounded.
  bool ShapesVary() const { return !set_shapes.empty(); }

  /// The override for `dtype`, else eval::DefaultTolerance(dtype). Every set, edge sets
  /// included, starts from it.
  core::Tolerance ToleranceFor(core::DType dtype) const;
  /// The problem's EAGER_ERROR_MULTIPLE (worker edge_cases.py): on an edge set (a seed),
  /// element i of an output listed in EdgeCaseFixture::allowance (seed_allowance) may
  /// also differ by this many times the allowance tensor's element i (eager PyTorch's
  /// own float error there, so 0 where eager is exact). The worker writes 8 by default; 0 (also when absent) is off
  /// (docs/fitness.md).
  double eager_error_multiple = 0;
};

/// Reads and validates `path`. Throws IoError (unreadable) or InvalidInputError naming
/// the file and field (malformed JSON, missing field, unknown role or dtype, negative
/// dimension, seeds and files of different lengths, no outputs, set_shapes of another
/// length than files or naming a shape with another number of dimensions, a size_output
/// that is not an int64 [ndim] output, an edge case's reference_error that is not a
/// finite number >= 0, an edge case's allowance or a seed_allowance entry that is not a
/// list of distinct output names, a seed_allowance of another length than files, an
/// eager_error_multiple that is not a finite number >= 0).
FixtureManifest ReadFixtureManifest(const std::filesystem::path& path);

/// The manifest as JSON; `files` are written relative to `manifest_dir` when inside it.
nlohmann::json FixtureManifestToJson(const FixtureManifest& manifest,
                                     const std::filesystem::path& manifest_dir);

}  // namespace kernelevolve::eval

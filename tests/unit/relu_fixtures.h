// ReLU fixtures written from C++ (no Python worker), shared by the CPU platform tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/problem.h"
#include "eval/fixture_manifest.h"
#include "eval/safetensors.h"

namespace kernelevolve::testing_util {

/// Writes seed_<k>.safetensors and manifest.json for ReLU over float32 [8, 1000]
/// (32000 bytes: a multiple of 64, so a guard page follows the last element), seeds
/// 0, 1, 2 of standard normal inputs, plus the edge-case sets "large" (seed 0 x 1e4)
/// and "zeros" as the worker writes them (edge_cases.py), into `dir`; returns the
/// matching Problem. `large_reference_error` > 0 is written as eager's own max error on
/// "large" (the manifest's reference_error of output.0, used in messages),
/// `eager_error_multiple` as the problem's EAGER_ERROR_MULTIPLE, and `large_allowance` > 0
/// as the per-element allowance of output.0 on "large" ("allowance.output.0", listed in
/// the manifest): `large_allowance` where the input is positive, 0 where relu clips it.
inline core::Problem WriteReluFixtures(const std::filesystem::path& dir,
                                       double large_reference_error = 0,
                                       double eager_error_multiple = 0, float large_allowance = 0) {
  namespace fs = std::filesystem;
  core::Problem problem;
  problem.name = "relu";
  problem.fixtures_dir = dir;
  problem.seeds = {0, 1, 2};
  problem.inputs = {{"input.0", core::TensorRole::kInput, {8, 1000}, core::DType::kFloat32}};
  problem.outputs = {{"output.0", core::TensorRole::kOutput, {8, 1000}, core::DType::kFloat32}};
  eval::FixtureManifest manifest;
  manifest.problem = "relu";
  manifest.eager_error_multiple = eager_error_multiple;
  manifest.inputs = problem.inputs;
  manifest.outputs = problem.outputs;
  manifest.seeds = problem.seeds;
  for (int seed : problem.seeds) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    eval::HostTensor x{"input.0", core::DType::kFloat32, {8, 1000}, {}};
    x.bytes.resize(8000 * sizeof(float));
    eval::HostTensor y = x;
    y.name = "output.0";
    for (int i = 0; i < 8000; ++i) {
      float v = normal(rng);
      x.MutableData<float>()[i] = v;
      y.MutableData<float>()[i] = v > 0 ? v : 0;
    }
    fs::path file = dir / ("seed_" + std::to_string(seed) + ".safetensors");
    eval::WriteSafetensors(file, {x, y}, {{"seed", std::to_string(seed)}});
    manifest.files.push_back(file);
    problem.fixture_files.push_back(file);
    if (seed != 0) continue;
    for (const auto& [name, scale] : {std::pair<std::string, float>{"large", 1e4f}, {"zeros", 0.0f}}) {
      eval::HostTensor ex = x, ey = y, allowance = y;
      allowance.name = eval::AllowanceTensorName("output.0");
      for (int i = 0; i < 8000; ++i) {
        const float v = x.Data<float>()[i] * scale;
        ex.MutableData<float>()[i] = v;
        ey.MutableData<float>()[i] = v > 0 ? v : 0;
        allowance.MutableData<float>()[i] = v > 0 ? large_allowance : 0.0f;
      }
      const bool with_allowance = name == "large" && large_allowance > 0;
      std::vector<eval::HostTensor> tensors = {ex, ey};
      if (with_allowance) tensors.push_back(allowance);
      fs::path edge_file = dir / ("edge_" + name + ".safetensors");
      eval::WriteSafetensors(edge_file, tensors, {{"edge_case", name}});
      manifest.edge_cases.push_back(
          {name,
           name == "large" ? "float inputs scaled by 10000" : "every float input element 0",
           edge_file,
           {},
           {}});
      if (name == "large" && large_reference_error > 0) {
        manifest.edge_cases.back().reference_error["output.0"] = large_reference_error;
      }
      if (with_allowance) manifest.edge_cases.back().allowance = {"output.0"};
    }
  }
  std::ofstream(dir / "manifest.json") << eval::FixtureManifestToJson(manifest, dir).dump(2);
  return problem;
}

}  // namespace kernelevolve::testing_util

// A loaded problem: its tensors, graph, fixtures and eager baseline.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "core/tensor_spec.h"
#include "core/timing.h"

namespace kernelevolve::core {

/// Allowed error for a dtype: |out - ref| <= atol + rtol * |ref| (numpy.allclose rule).
struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};

struct Problem {
  std::string name;                     // file stem, "softmax"
  std::filesystem::path source_path;    // the problem .py file
  std::map<std::string, std::string> overrides;  // --set NAME=VALUE as given
  /// ABI inputs: forward() arguments in get_inputs() order, then the module's
  /// state_dict() entries in state_dict() order (see docs/abi.md).
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;      // forward() results, a tuple flattened in order
  OpGraph graph;                        // empty when capture failed (graph_error says why)
  std::string graph_error;
  /// The graphs of the later seeds whose inputs have other sizes than the first seed's
  /// (jagged inputs), in seed order; empty when sizes never vary or a capture failed.
  /// The loop IR compares them with `graph` to tell which sizes the program depends on.
  std::vector<OpGraph> shape_graphs;
  std::filesystem::path fixtures_dir;   // holds manifest.json and seed_<k>.safetensors
  std::vector<std::filesystem::path> fixture_files;  // one per seed
  std::vector<int> seeds;
  TimingStats eager_baseline;           // drop-in eager latency, same thread count
  int threads = 1;
  std::string torch_version;
};

}  // namespace kernelevolve::core

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

/// Whether the reference's CUDA float32 products run in TF32 (tensor-core inputs
/// rounded to a 10-bit mantissa, float32 accumulation), as PyTorch's flags say after
/// importing the problem (worker/kernelevolve_worker/reference_precision.py;
/// https://pytorch.org/docs/stable/notes/cuda.html, "TensorFloat-32"). GPU targets only:
/// a float32 kernel may use plain TF32 for the products the reference runs in it.
struct ReferenceTf32 {
  bool matmul = false;  // torch.backends.cuda.matmul.allow_tf32 (PyTorch's default: false)
  bool conv = false;    // torch.backends.cudnn.allow_tf32 (PyTorch's default: true)
  /// cuDNN's recurrent layers (nn.RNN / LSTM / GRU): torch.backends.cudnn.allow_tf32, or
  /// torch.backends.cudnn.rnn.fp32_precision == "tf32" since torch 2.9 (default: true).
  bool rnn = false;
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
  ReferenceTf32 reference_tf32;
  /// The problem's EAGER_ERROR_MULTIPLE (worker edge_cases.py; default 8, 0 = off):
  /// where float rounding moves an element by about its tolerance, the checks allow this
  /// many times eager's own per-element error scale there (worker eager_error.py) on
  /// the edge sets, and on GPU targets on every set. Only then may a GPU kernel use plain
  /// TF32 where the reference does (TritonTf32), since TF32 misses float32 tolerances
  /// against the exact answer. 0 here when the worker did not say.
  double eager_error_multiple = 0;

  /// reference_tf32 when eager_error_multiple > 0, else no TF32 anywhere.
  ReferenceTf32 TritonTf32() const { return eager_error_multiple > 0 ? reference_tf32 : ReferenceTf32{}; }
};

}  // namespace kernelevolve::core

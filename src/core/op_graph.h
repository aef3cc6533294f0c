// The reference's op graph as captured by the worker (torch make_fx, ATen level).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace kernelevolve::core {

/// One argument of an ATen call, named after the op schema, defaults filled in.
/// Either a reference to another node (`ref` non-empty) or a constant `value`
/// (number, bool, string, null or list, as JSON).
struct OpArg {
  std::string name;
  std::string ref;
  nlohmann::json value;
  bool IsRef() const { return !ref.empty(); }
};

enum class OpNodeKind { kPlaceholder, kParameter, kCall };

struct OpNode {
  std::string name;
  OpNodeKind kind = OpNodeKind::kCall;
  std::string target;       // "aten.relu.default"; empty for placeholders/parameters
  std::vector<OpArg> args;  // schema order
  std::vector<int64_t> shape;
  DType dtype = DType::kFloat32;
  int abi_index = -1;       // placeholders and parameters: index in the ABI input list
  /// The library eager PyTorch runs this node in on CUDA when the op alone does not say:
  /// "cudnn" for the nodes of an nn.RNN / nn.LSTM / nn.GRU, which cuDNN runs whole (its
  /// products then follow torch.backends.cudnn.allow_tf32, not the matmul flag); empty
  /// otherwise (graph_capture.py, "backend").
  std::string backend;

  /// The named argument, or nullptr.
  const OpArg* Arg(const std::string& arg_name) const {
    for (const auto& a : args) {
      if (a.name == arg_name) return &a;
    }
    return nullptr;
  }
};

struct OpGraph {
  std::vector<OpNode> nodes;         // topological order
  std::vector<std::string> outputs;  // node names, in ABI output order

  /// Node by name, or nullptr.
  const OpNode* Find(const std::string& name) const {
    for (const auto& n : nodes) {
      if (n.name == name) return &n;
    }
    return nullptr;
  }
  /// The call nodes only, in order.
  std::vector<const OpNode*> Calls() const {
    std::vector<const OpNode*> out;
    for (const auto& n : nodes) {
      if (n.kind == OpNodeKind::kCall) out.push_back(&n);
    }
    return out;
  }
};

/// Parses the worker's "graph" JSON (worker/kernelevolve_worker/graph_capture.py).
/// Throws InvalidInputError on a malformed document.
OpGraph OpGraphFromJson(const nlohmann::json& doc);
/// The first node of the worker's "graph" JSON whose "dtype" DTypeFromName does not
/// know (a complex64 intermediate of torch.fft, say), as
/// "unsupported_dtype: complex64 (node NAME, aten.TARGET)" (a placeholder or parameter
/// names its kind instead of a target); empty when every dtype is known or the
/// document is malformed (OpGraphFromJson reports that). Lets the loader keep a problem
/// whose graph has such a node: templates refuse it (exit 1), the reference stays the answer.
std::string FirstUnsupportedDType(const nlohmann::json& doc);
nlohmann::json OpGraphToJson(const OpGraph& graph);

}  // namespace kernelevolve::core

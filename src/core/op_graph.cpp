#include "core/op_graph.h"

#include "core/error.h"

namespace kernelevolve::core {
namespace {

OpNodeKind KindFromName(const std::string& kind) {
  if (kind == "placeholder") return OpNodeKind::kPlaceholder;
  if (kind == "parameter") return OpNodeKind::kParameter;
  if (kind == "call") return OpNodeKind::kCall;
  throw InvalidInputError("graph: unknown node kind '" + kind + "'");
}

std::string KindName(OpNodeKind kind) {
  switch (kind) {
    case OpNodeKind::kPlaceholder: return "placeholder";
    case OpNodeKind::kParameter: return "parameter";
    case OpNodeKind::kCall: return "call";
  }
  return "call";
}

}  // namespace

OpGraph OpGraphFromJson(const nlohmann::json& doc) {
  OpGraph graph;
  try {
    for (const auto& jn : doc.at("nodes")) {
      OpNode node;
      node.name = jn.at("name").get<std::string>();
      node.kind = KindFromName(jn.at("kind").get<std::string>());
      node.target = jn.value("target", "");
      node.shape = jn.value("shape", std::vector<int64_t>{});
      node.dtype = DTypeFromName(jn.value("dtype", "float32"));
      node.abi_index = jn.value("abi_index", -1);
      node.backend = jn.value("backend", "");
      for (const auto& ja : jn.value("args", nlohmann::json::array())) {
        OpArg arg;
        arg.name = ja.at("name").get<std::string>();
        arg.ref = ja.value("ref", "");
        arg.value = ja.contains("value") ? ja.at("value") : nlohmann::json();
        node.args.push_back(std::move(arg));
      }
      graph.nodes.push_back(std::move(node));
    }
    graph.outputs = doc.at("outputs").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInputError(std::string("graph: malformed document: ") + e.what());
  }
  return graph;
}

std::string FirstUnsupportedDType(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array()) return "";
  for (const auto& jn : doc["nodes"]) {
    if (!jn.is_object() || !jn.contains("dtype") || !jn["dtype"].is_string()) continue;
    const std::string dtype = jn["dtype"].get<std::string>();
    try {
      (void)DTypeFromName(dtype);
    } catch (const InvalidInputError&) {
      const std::string name = jn.value("name", std::string("?"));
      std::string target = jn.value("target", std::string());
      if (target.empty()) target = jn.value("kind", std::string("?"));
      return "unsupported_dtype: " + dtype + " (node " + name + ", " + target + ")";
    }
  }
  return "";
}

nlohmann::json OpGraphToJson(const OpGraph& graph) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : graph.nodes) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& a : n.args) {
      nlohmann::json ja = {{"name", a.name}};
      if (a.IsRef()) {
        ja["ref"] = a.ref;
      } else {
        ja["value"] = a.value;
      }
      args.push_back(std::move(ja));
    }
    nlohmann::json jn = {{"name", n.name},   {"kind", KindName(n.kind)},   {"target", n.target},
                         {"args", args},     {"shape", n.shape},           {"dtype", DTypeName(n.dtype)},
                         {"abi_index", n.abi_index}};
    if (!n.backend.empty()) jn["backend"] = n.backend;
    nodes.push_back(std::move(jn));
  }
  return {{"nodes", nodes}, {"outputs", graph.outputs}};
}

}  // namespace kernelevolve::core

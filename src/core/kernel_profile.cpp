#include "core/kernel_profile.h"

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::core {
namespace {

using nlohmann::json;

std::optional<double> OptionalNumber(const json& doc, const char* key, const std::string& where) {
  if (!doc.contains(key) || doc.at(key).is_null()) return std::nullopt;
  if (!doc.at(key).is_number()) {
    throw InvalidInputError(fmt::format("profile: {}.{} must be a number or null, got {}", where,
                                        key, doc.at(key).dump()));
  }
  return doc.at(key).get<double>();
}

std::string Text(const json& doc, const char* key, const std::string& where) {
  if (!doc.contains(key) || doc.at(key).is_null()) return "";
  if (!doc.at(key).is_string())
    throw InvalidInputError(fmt::format("profile: {}.{} must be a string", where, key));
  return doc.at(key).get<std::string>();
}

KernelMetrics MetricsFromJson(const json& doc, const std::string& where) {
  if (!doc.is_object())
    throw InvalidInputError(fmt::format("profile: {} must be an object", where));
  KernelMetrics m;
  m.name = Text(doc, "name", where);
  m.duration_us = OptionalNumber(doc, "duration_us", where);
  m.dram_throughput_pct = OptionalNumber(doc, "dram_throughput_pct", where);
  m.sm_throughput_pct = OptionalNumber(doc, "sm_throughput_pct", where);
  m.achieved_occupancy_pct = OptionalNumber(doc, "achieved_occupancy_pct", where);
  m.registers_per_thread = OptionalNumber(doc, "registers_per_thread", where);
  m.block_size = OptionalNumber(doc, "block_size", where);
  m.grid_size = OptionalNumber(doc, "grid_size", where);
  for (const auto& s : doc.value("top_stalls", json::array())) {
    const std::string at = where + ".top_stalls";
    m.top_stalls.push_back({Text(s, "reason", at), OptionalNumber(s, "pct", at).value_or(0),
                            OptionalNumber(s, "share", at).value_or(0)});
  }
  return m;
}

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json MetricsToJson(const KernelMetrics& m) {
  json stalls = json::array();
  for (const auto& s : m.top_stalls)
    stalls.push_back({{"reason", s.reason}, {"pct", s.pct}, {"share", s.share}});
  return {{"name", m.name},
          {"duration_us", Optional(m.duration_us)},
          {"dram_throughput_pct", Optional(m.dram_throughput_pct)},
          {"sm_throughput_pct", Optional(m.sm_throughput_pct)},
          {"achieved_occupancy_pct", Optional(m.achieved_occupancy_pct)},
          {"registers_per_thread", Optional(m.registers_per_thread)},
          {"block_size", Optional(m.block_size)},
          {"grid_size", Optional(m.grid_size)},
          {"top_stalls", stalls}};
}

}  // namespace

KernelProfile KernelProfileFromJson(const json& doc) {
  if (!doc.is_object())
    throw InvalidInputError("profile: expected a JSON object, got " + doc.dump());
  KernelProfile p;
  p.tool = doc.contains("tool") ? Text(doc, "tool", "profile") : "ncu";
  p.status = Text(doc, "status", "profile");
  if (p.status.empty()) throw InvalidInputError("profile: the field \"status\" is missing");
  p.note = Text(doc, "note", "profile");
  p.seconds = OptionalNumber(doc, "seconds", "profile").value_or(0);
  const json kernels = doc.value("kernels", json::array());
  for (size_t i = 0; i < kernels.size(); ++i)
    p.kernels.push_back(MetricsFromJson(kernels[i], fmt::format("kernels[{}]", i)));
  if (doc.contains("total") && doc.at("total").is_object())
    p.total = MetricsFromJson(doc.at("total"), "total");
  return p;
}

json KernelProfileToJson(const KernelProfile& p) {
  json kernels = json::array();
  for (const auto& k : p.kernels) kernels.push_back(MetricsToJson(k));
  return {{"tool", p.tool},       {"status", p.status}, {"note", p.note},
          {"seconds", p.seconds}, {"kernels", kernels}, {"total", MetricsToJson(p.total)}};
}

}  // namespace kernelevolve::core

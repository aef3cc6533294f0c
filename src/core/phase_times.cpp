#include "core/phase_times.h"

#include <cmath>

namespace kernelevolve::core {

void PhaseTimes::Add(const std::string& name, double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return;
  for (auto& [n, s] : entries_) {
    if (n == name) {
      s += seconds;
      return;
    }
  }
  entries_.emplace_back(name, seconds);
}

void PhaseTimes::AddParts(const std::string& parent, const nlohmann::json& parts) {
  if (!parts.is_object()) return;
  for (const auto& [part, seconds] : parts.items()) {
    if (seconds.is_number()) Add(parent + "." + part, seconds.get<double>());
  }
}

void PhaseTimes::AddAll(const PhaseTimes& other) {
  for (const auto& [name, seconds] : other.entries_) Add(name, seconds);
}

nlohmann::json PhaseTimes::ToJson() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, seconds] : entries_) out[name] = seconds;
  return out;
}

}  // namespace kernelevolve::core

// Wall-clock time per phase of a run (issue 22: where a problem's fixed cost goes).
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelevolve::core {

/// Seconds of wall-clock time per named phase, in the order the phases were first
/// recorded; a phase recorded twice accumulates. Names with a dot are parts of the
/// phase before the dot, as a Python worker reported them ("load.references" is part of
/// "load"), so the top-level names (no dot) do not overlap and sum to at most the run's
/// wall time. Not thread-safe.
class PhaseTimes {
 public:
  /// Adds `seconds` (>= 0; negative or non-finite values are ignored) to phase `name`.
  void Add(const std::string& name, double seconds);
  /// Adds each `{"part": seconds}` entry of `parts` (a worker's "phase_seconds"
  /// object) as phase "<parent>.<part>"; anything that is not an object of numbers is
  /// ignored (an older worker sends none).
  void AddParts(const std::string& parent, const nlohmann::json& parts);
  /// Adds every phase of `other`, in its order.
  void AddAll(const PhaseTimes& other);
  const std::vector<std::pair<std::string, double>>& Entries() const { return entries_; }
  bool Empty() const { return entries_.empty(); }
  /// {"name": seconds, ...} (a JSON object: readers get the names sorted, "load" then
  /// its parts "load.capture", ...).
  nlohmann::json ToJson() const;

 private:
  std::vector<std::pair<std::string, double>> entries_;
};

/// Adds the wall time from construction to destruction (steady_clock) to one phase.
class ScopedPhase {
 public:
  ScopedPhase(PhaseTimes& times, std::string name)
      : times_(times), name_(std::move(name)), start_(std::chrono::steady_clock::now()) {}
  ~ScopedPhase() {
    times_.Add(name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseTimes& times_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kernelevolve::core

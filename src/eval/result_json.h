// JSON forms of the measurement value types, shared by the CPU harness (which prints
// them), the platforms (which parse them), the store and the reports.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/evaluation.h"
#include "core/timing.h"

namespace kernelevolve::eval {

/// {"n", "median", "mean", "stdev", "min", "max", "p10", "p90", "ci_low", "ci_high"},
/// times in microseconds (the stats object of docs/result_json.md; the enclosing key
/// carries the unit, e.g. "latency_us"). Non-finite numbers are written as the strings
/// "NaN", "Infinity", "-Infinity" (JSON has no literal for them).
nlohmann::json TimingStatsToJson(const core::TimingStats& stats);
/// Inverse of TimingStatsToJson (also accepts "median_us"-style keys). Missing fields
/// keep their defaults (n = 0: unmeasured).
/// Throws InvalidInputError when `doc` is not an object or a field has the wrong type.
core::TimingStats TimingStatsFromJson(const nlohmann::json& doc);

/// {"seed_index", "output", "passed", "max_abs_error", "max_rel_error", "mismatches",
///  "first_mismatch", "atol", "rtol", "note"}; non-finite errors as in TimingStatsToJson.
nlohmann::json OutputCheckToJson(const core::OutputCheck& check);
/// Inverse of OutputCheckToJson; same error rules as TimingStatsFromJson.
core::OutputCheck OutputCheckFromJson(const nlohmann::json& doc);

/// A double as JSON: a number when finite, else "NaN" / "Infinity" / "-Infinity".
nlohmann::json DoubleToJson(double value);
/// Inverse of DoubleToJson (also accepts null as NaN). Throws InvalidInputError.
double DoubleFromJson(const nlohmann::json& value);

/// The last `max_bytes` bytes of `text` (or all of it), cut on a UTF-8 character
/// boundary, with invalid UTF-8 bytes replaced by '?', so it can be stored as JSON.
std::string Utf8Tail(const std::string& text, size_t max_bytes);
/// The first `max_bytes` bytes of `text`, cut and cleaned as Utf8Tail does.
std::string Utf8Head(const std::string& text, size_t max_bytes);

}  // namespace kernelevolve::eval

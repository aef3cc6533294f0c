// Validators for numeric command-line flags that CLI11's own range checks get wrong:
// CLI::PositiveNumber lets NaN through (every comparison with NaN is false), and its
// refusal of 0 prints the whole double range ("not in range 4.94066e-324 to
// 1.79769e+308"). NaN in a flag was stored as null in the run's config and made the
// run unresumable (issue 22).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace kernelevolve::cli {

/// Accepts a finite number > 0 (seconds, for the message). Refuses NaN, infinities,
/// zero, negatives and non-numbers at parse time with one short line, e.g.
/// "--lease: 0 is not a positive number of seconds".
CLI::Validator PositiveSeconds();

/// The check behind PositiveSeconds: "" when `text` is a finite number > 0, else the
/// reason (without the flag's name).
std::string PositiveSecondsError(const std::string& text);

/// Accepts a finite number of seconds >= `minimum` (> 0); below it one line with
/// `why`, e.g. "--load-timeout: 0.001 s is below the 1 s minimum: a load imports the
/// problem and runs its reference" (a limit no load can meet ended every job "timeout").
CLI::Validator SecondsAtLeast(double minimum, std::string why);

/// The check behind SecondsAtLeast: "" when accepted, else the reason.
std::string SecondsAtLeastError(const std::string& text, double minimum, const std::string& why);

/// SecondsAtLeast for the --load-timeout flags: 1 s, with the reason.
CLI::Validator LoadTimeoutSeconds();

}  // namespace kernelevolve::cli

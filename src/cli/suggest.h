// "Did you mean ...?" for a mistyped command or option: `kernelevolve optimze` or
// `optimize --budgett 8` name the nearest known word instead of CLI11's bare
// "A subcommand is required" / "The following arguments were not expected".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kernelevolve::cli {

/// Levenshtein distance: the fewest single-character insertions, deletions and
/// substitutions that turn `a` into `b` (V. I. Levenshtein, 1966), by the
/// Wagner-Fischer dynamic program (R. A. Wagner, M. J. Fischer, JACM 21(1), 1974).
int EditDistance(const std::string& a, const std::string& b);

/// The candidate nearest to `word`, if it is close enough to be a typo: at most
/// max(2, |word| / 3) edits away (ties: the first in `candidates`). nullopt otherwise.
std::optional<std::string> NearestWord(const std::string& word, const std::vector<std::string>& candidates);

/// After `app.parse` threw `error`: one line per word it could not place, naming the
/// nearest command or option ("error: unknown option '--budgett' for 'optimize' (did
/// you mean '--budget'?)"); an unknown first word lists the commands. "" when the error
/// is of another kind (a missing or invalid value), which CLI11's own message explains.
std::string UnknownWordsMessage(const CLI::App& app, const CLI::ParseError& error,
                                const std::vector<std::string>& args);

}  // namespace kernelevolve::cli

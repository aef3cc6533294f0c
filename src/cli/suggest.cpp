#include "cli/suggest.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kernelevolve::cli {
namespace {

/// The deepest subcommand the parse entered (`kb search` -> search), else `app`.
const CLI::App* DeepestParsed(const CLI::App& app) {
  const CLI::App* at = &app;
  for (bool descended = true; descended;) {
    descended = false;
    for (const CLI::App* sub : at->get_subcommands({})) {
      if (sub->parsed()) {
        at = sub;
        descended = true;
        break;
      }
    }
  }
  return at;
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> LongOptions(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

std::string DidYouMean(const std::optional<std::string>& nearest) {
  return nearest ? fmt::format(" (did you mean '{}'?)", *nearest) : "";
}

}  // namespace

int EditDistance(const std::string& a, const std::string& b) {
  // row[j]: distance between the first i characters of a and the first j of b.
  std::vector<int> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];  // distance(a[:i-1], b[:j-1])
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> NearestWord(const std::string& word, const std::vector<std::string>& candidates) {
  const int limit = std::max<int>(2, static_cast<int>(word.size()) / 3);
  std::optional<std::string> best;
  int best_distance = limit + 1;
  for (const std::string& c : candidates) {
    const int d = EditDistance(word, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  return best;
}

std::string UnknownWordsMessage(const CLI::App& app, const CLI::ParseError& error,
                                const std::vector<std::string>& args) {
  const CLI::App* at = DeepestParsed(app);
  const std::string where = at == &app ? std::string("kernelevolve") : at->get_name();
  const std::vector<std::string> commands = SubcommandNames(*at);
  auto unknown_command = [&](const std::string& word) {
    return fmt::format("error: unknown command '{}' for '{}'{}; the commands are {}\n", word, where,
                       DidYouMean(NearestWord(word, commands)), fmt::join(commands, ", "));
  };
  std::vector<std::string> left = at->remaining();
  if (at == &app && left.empty()) left = args;
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr && !commands.empty()) {
    // `kernelevolve optimze x`, `kernelevolve kb serch q`, `kernelevolve kb`.
    for (const std::string& word : left) {
      if (word.rfind('-', 0) != 0) return unknown_command(word);
    }
    return fmt::format("error: '{}' needs a command: {}\n", where, fmt::join(commands, ", "));
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr) return "";
  std::string out;
  for (const std::string& extra : left) {
    if (extra.rfind("--", 0) == 0) {
      const std::string name = extra.substr(0, extra.find('='));
      out += fmt::format("error: unknown option '{}' for '{}'{}\n", name, where,
                         DidYouMean(NearestWord(name, LongOptions(*at))));
    } else if (extra.rfind('-', 0) != 0 && !commands.empty()) {
      out += unknown_command(extra);
    }
  }
  return out;
}

}  // namespace kernelevolve::cli

#include "cli/config_file.h"

#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/suggest.h"
#include "core/error.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

/// "[optimize], [bench], [compare] or [eval]".
std::string SectionList() {
  std::vector<std::string> sections;
  for (const auto& name : ConfigurableCommands()) sections.push_back("[" + name + "]");
  return fmt::format("{}", fmt::join(sections, ", "));
}

/// " (did you mean 'X'?)" when `word` is a typo of one of `known`, else "".
std::string DidYouMean(const std::string& word, const std::vector<std::string>& known) {
  const auto nearest = NearestWord(word, known);
  return nearest ? fmt::format(" (did you mean '{}'?)", *nearest) : "";
}

/// The long flag names of `cmd` without "--", as config keys.
std::vector<std::string> KeysOf(const CLI::App& cmd) {
  std::vector<std::string> keys;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt == cmd.get_help_ptr() || !opt->get_configurable()) continue;
    for (const auto& name : opt->get_lnames()) keys.push_back(name);
  }
  return keys;
}

/// The option a key names, or throws InvalidInputError naming the file and the key.
CLI::Option* FindOption(CLI::App& cmd, const CLI::ConfigItem& item, const fs::path& file) {
  CLI::Option* opt = cmd.get_option_no_throw("--" + item.name);
  if (opt == nullptr && item.name.size() == 1) opt = cmd.get_option_no_throw("-" + item.name);
  const std::string where = fmt::format("{}: [{}] {}", file.string(), cmd.get_name(), item.name);
  if (opt == nullptr && cmd.get_option_no_throw(item.name) != nullptr) {
    throw core::InvalidInputError(fmt::format(
        "{}: a positional argument of `{}`; give it on the command line", where, cmd.get_name()));
  }
  if (opt == nullptr) {
    throw core::InvalidInputError(fmt::format("{}: unknown key{}; `kernelevolve {} --help` lists the flags",
                                              where, DidYouMean(item.name, KeysOf(cmd)), cmd.get_name()));
  }
  if (opt == cmd.get_help_ptr() || !opt->get_configurable()) {
    throw core::InvalidInputError(fmt::format("{}: cannot be set from a config file", where));
  }
  return opt;
}

/// Sets `opt` from the item as CLI11's own config reader does, running its validators
/// and conversion now; a refused value names the file, section and key.
void Apply(CLI::Option& opt, const CLI::ConfigItem& item, const fs::path& file, const std::string& section) {
  try {
    if (opt.get_expected_min() == 0) {  // a flag: quiet = true
      opt.add_result(opt.get_flag_value(item.name, CLI::ConfigTOML().to_flag(item)));
    } else {
      opt.add_result(item.inputs);
    }
    opt.run_callback();
  } catch (const CLI::Error& e) {
    throw core::InvalidInputError(fmt::format("{}: [{}] {} = {}: {}", file.string(), section, item.name,
                                              fmt::join(item.inputs, ", "), e.what()));
  }
}

/// The subcommand of `app` with this name, or null.
CLI::App* Subcommand(CLI::App& app, const std::string& name) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

std::vector<CLI::ConfigItem> ReadItems(const fs::path& file) {
  if (!fs::exists(file)) throw core::InvalidInputError(fmt::format("{}: no such config file", file.string()));
  if (!fs::is_regular_file(file)) {
    throw core::InvalidInputError(fmt::format("{}: not a regular file, not a config file", file.string()));
  }
  if (!std::ifstream(file).good()) {
    throw core::InvalidInputError(fmt::format("{}: cannot read the config file", file.string()));
  }
  try {
    return CLI::ConfigTOML().from_file(file.string());
  } catch (const CLI::Error& e) {
    throw core::InvalidInputError(fmt::format("{}: not a valid config file: {}", file.string(), e.what()));
  }
}

}  // namespace

const std::vector<std::string>& ConfigurableCommands() {
  static const std::vector<std::string> commands = {"optimize", "bench", "compare", "eval"};
  return commands;
}

void AddConfigOption(CLI::App& cmd, fs::path& file) {
  cmd.add_option("--config", file,
                 "TOML file of flags, one [section] per command (config/example.toml); flags given "
                 "on the command line win")
      ->configurable(false);
}

void ApplyConfigFile(CLI::App& cmd, const fs::path& file) {
  const std::vector<CLI::ConfigItem> items = ReadItems(file);
  std::set<std::pair<std::string, std::string>> seen;  // (section, key)
  for (const CLI::ConfigItem& item : items) {
    if (item.name == "++" || item.name == "--") continue;  // CLI11's section open / close markers
    if (item.parents.empty()) {
      throw core::InvalidInputError(fmt::format("{}: key '{}' is outside a section; put it under {}",
                                                file.string(), item.name, SectionList()));
    }
    const std::string section = fmt::format("{}", fmt::join(item.parents, "."));
    const auto& commands = ConfigurableCommands();
    CLI::App* parent = cmd.get_parent();
    CLI::App* target = nullptr;
    if (item.parents.size() == 1 && std::find(commands.begin(), commands.end(), section) != commands.end()) {
      target = section == cmd.get_name() ? &cmd : parent == nullptr ? nullptr : Subcommand(*parent, section);
    }
    if (target == nullptr) {
      throw core::InvalidInputError(fmt::format("{}: unknown section [{}]{}; the sections are {}", file.string(),
                                                section, DidYouMean(section, commands), SectionList()));
    }
    CLI::Option* opt = FindOption(*target, item, file);
    if (!seen.emplace(section, item.name).second) {
      throw core::InvalidInputError(
          fmt::format("{}: [{}] {}: given twice", file.string(), section, item.name));
    }
    if (target != &cmd || opt->count() > 0) continue;  // another command's, or the command line wins
    Apply(*opt, item, file, section);
  }
}

}  // namespace kernelevolve::cli

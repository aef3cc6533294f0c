// `--config FILE.toml` (issue 20): the flags of optimize, bench, compare and eval read
// from a TOML file, one section per command as CLI11 names them ([optimize], [bench],
// [compare], [eval]), keys spelled as the long flags without "--" (budget,
// time-limit, set = ["batch_size=16"], quiet = true). A flag given on the command
// line wins over the file. config/example.toml documents every key; docs/config.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kernelevolve::cli {

/// The commands whose flags a config file may set, in the order error messages list them.
const std::vector<std::string>& ConfigurableCommands();

/// Adds `--config FILE.toml` to `cmd`, bound to `file` (not itself settable from a file).
void AddConfigOption(CLI::App& cmd, std::filesystem::path& file);

/// After the command line of `cmd` parsed: reads `file` with CLI11's TOML reader and
/// applies the keys of its [<cmd name>] section to the options of `cmd` that the command
/// line left unset (their validators run as on the command line). The sections of the
/// other configurable commands (siblings of `cmd` under the same parent) are checked
/// too, so that one file can serve every command, but not applied. Throws
/// InvalidInputError naming the file (exit 2) when it is missing or unreadable, and
/// naming the file, section and key for a key outside a section, an unknown section or
/// key (with the nearest known one, as cli/suggest.h), a positional argument or --config
/// itself as a key, a key given twice, or a value the option refuses.
void ApplyConfigFile(CLI::App& cmd, const std::filesystem::path& file);

}  // namespace kernelevolve::cli

// `kernelevolve kb ...`: inspect and extend the knowledge base (issue 8).
//   kb search "QUERY" [--platform P] [--phase X] [--bottleneck B] [-k N] [--budget T] [--json]
//   kb add PATH
//   kb experiences [--platform P] [--problem NAME] [--limit N] [--json]
//   kb reindex
// Every subcommand takes --kb PATH (default $KERNELEVOLVE_KB or
// <cache dir>/knowledge.db).
#pragma once

#include <filesystem>
#include <string>

namespace CLI {
class App;
}

namespace kernelevolve::cli {

struct KbOptions {
  std::filesystem::path kb_path;  // empty: knowledge::DefaultKnowledgeDbPath(DefaultCacheDir())
  std::string query;
  std::string platform;
  std::string phase;
  std::string bottleneck;
  int k = 5;
  int token_budget = 1500;
  std::filesystem::path add_path;
  std::string problem;
  int limit = 50;
  bool json = false;
};

/// Registers `kb` and its subcommands on `app`, writing flags into `options` (which must
/// outlive parsing).
void AddKbCommand(CLI::App& app, KbOptions& options);

/// Runs the `kb` subcommand that was parsed (`kb` is app.get_subcommand("kb")). Prints
/// to stdout; returns the exit code: 0 ok, 2 bad input (InvalidInputError escapes to
/// the caller, which prints it), 3 when the knowledge base cannot be used (IoError
/// escapes likewise).
int RunKbCommand(const CLI::App& kb, const KbOptions& options);

}  // namespace kernelevolve::cli

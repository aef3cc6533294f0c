// "Did you mean ...?" for mistyped commands and options (cli/suggest.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/suggest.h"

namespace kernelevolve {
namespace {

TEST(EditDistance, TextbookValues) {
  EXPECT_EQ(cli::EditDistance("kitten", "sitting"), 3);  // two substitutions, one insertion
  EXPECT_EQ(cli::EditDistance("", "abc"), 3);
  EXPECT_EQ(cli::EditDistance("abc", ""), 3);
  EXPECT_EQ(cli::EditDistance("bench", "bench"), 0);
  EXPECT_EQ(cli::EditDistance("optimze", "optimize"), 1);
  EXPECT_EQ(cli::EditDistance("flaw", "lawn"), 2);
}

TEST(NearestWord, OnlyCloseWordsAreSuggested) {
  const std::vector<std::string> commands = {"optimize", "kb", "resume", "compare", "bench"};
  EXPECT_EQ(cli::NearestWord("optimze", commands), "optimize");
  EXPECT_EQ(cli::NearestWord("bnch", commands), "bench");
  EXPECT_EQ(cli::NearestWord("kv", commands), "kb");
  EXPECT_EQ(cli::NearestWord("zzzzzz", commands), std::nullopt);
  EXPECT_EQ(cli::NearestWord("--budgett", {"--budget", "--time-limit"}), "--budget");
}

/// Parses `args` with a small app shaped like kernelevolve's; returns the message.
std::string MessageFor(std::vector<std::string> args) {
  CLI::App app{"test"};
  app.require_subcommand(1);
  std::string problem;
  int budget = 0;
  auto* optimize = app.add_subcommand("optimize", "");
  optimize->add_option("problem", problem)->required();
  optimize->add_option("--budget", budget);
  auto* kb = app.add_subcommand("kb", "");
  kb->require_subcommand(1);
  std::string query;
  kb->add_subcommand("search", "")->add_option("query", query);
  kb->add_subcommand("reindex", "");
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last-first
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return cli::UnknownWordsMessage(app, e, args);
  }
  return "(parsed)";
}

TEST(UnknownWordsMessage, NamesTheNearestCommandOrOption) {
  EXPECT_EQ(MessageFor({"optimze", "x.py"}),
            "error: unknown command 'optimze' for 'kernelevolve' (did you mean 'optimize'?); the commands are "
            "optimize, kb\n");
  EXPECT_EQ(MessageFor({"kb", "serch", "q"}),
            "error: unknown command 'serch' for 'kb' (did you mean 'search'?); the commands are search, reindex\n");
  EXPECT_EQ(MessageFor({"kb"}), "error: 'kb' needs a command: search, reindex\n");
  EXPECT_EQ(MessageFor({"optimize", "x.py", "--budgett=3"}),
            "error: unknown option '--budgett' for 'optimize' (did you mean '--budget'?)\n");
  EXPECT_EQ(MessageFor({"optimize", "x.py", "--zzzzzzzz"}), "error: unknown option '--zzzzzzzz' for 'optimize'\n");
  // Errors of another kind keep CLI11's own message.
  EXPECT_EQ(MessageFor({"optimize"}), "");                      // problem is required
  EXPECT_EQ(MessageFor({"optimize", "x.py", "--budget", "abc"}), "");  // could not convert
  EXPECT_EQ(MessageFor({"optimize", "x.py"}), "(parsed)");
}

}  // namespace
}  // namespace kernelevolve

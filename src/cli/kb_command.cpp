#include "cli/kb_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/paths.h"
#include "core/error.h"
#include "knowledge/front_matter.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/knowledge_paths.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

fs::path KbPath(const KbOptions& o) {
  return o.kb_path.empty() ? knowledge::DefaultKnowledgeDbPath(DefaultCacheDir()) : o.kb_path;
}

knowledge::KnowledgeBase OpenKb(const KbOptions& o) {
  return knowledge::KnowledgeBase::Open(KbPath(o), knowledge::DefaultCorpusDirs());
}

std::string Indent(const std::string& text, const std::string& prefix) {
  std::string out = prefix;
  for (char c : text) {
    out += c;
    if (c == '\n') out += prefix;
  }
  return out;
}

std::string StatsLine(const knowledge::ReindexStats& s) {
  return fmt::format("{} files: {} indexed ({} passages), {} unchanged, {} removed", s.scanned,
                     s.indexed, s.passages, s.unchanged, s.removed);
}

void PrintWarnings(const knowledge::ReindexStats& s) {
  for (const auto& w : s.warnings) std::cerr << "kernelevolve: warning: " << w << "\n";
}

int Search(const KbOptions& o) {
  const bool has_word = std::any_of(o.query.begin(), o.query.end(),
                                    [](unsigned char c) { return std::isalnum(c) != 0; });
  if (!has_word && o.platform.empty() && o.phase.empty() && o.bottleneck.empty()) {
    throw core::InvalidInputError(
        "kb search: the query has no words and there is no filter; give a diagnosis, an error "
        "message or a question (e.g. kb search \"memory bound softmax\"), or --platform, --phase, "
        "--bottleneck");
  }
  auto kb = OpenKb(o);
  PrintWarnings(kb.LastReindex());
  knowledge::RetrievalQuery q{o.query, o.platform, o.phase, o.bottleneck, o.k, o.token_budget};
  const auto passages = kb.Retrieve(q);
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : passages) {
      out.push_back({{"document", p.document}, {"corpus", p.corpus}, {"title", p.title},
                     {"heading", p.heading}, {"tokens", p.tokens}, {"bm25", p.bm25},
                     {"boost", p.boost}, {"score", p.score}, {"matched_filters", p.matched_filters},
                     {"relaxed_filters", p.relaxed_filters}, {"matched_terms", p.matched_terms},
                     {"why", p.Why()}, {"text", p.text}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  int tokens = 0;
  for (const auto& p : passages) tokens += p.tokens;
  std::cout << fmt::format("knowledge base {} ({} documents)\n", kb.Path().string(), kb.Documents().size());
  std::cout << fmt::format("query \"{}\" platform={} phase={} bottleneck={} k={} budget={} tokens\n",
                           o.query, o.platform.empty() ? "any" : o.platform,
                           o.phase.empty() ? "any" : o.phase,
                           o.bottleneck.empty() ? "any" : o.bottleneck, o.k, o.token_budget);
  std::cout << fmt::format("{} passages, {} tokens\n", passages.size(), tokens);
  int rank = 0;
  for (const auto& p : passages) {
    std::cout << fmt::format("\n{}. {}/{} -- {} [score {:.2f}, {} tokens]\n", ++rank, p.corpus,
                             p.document, p.heading, p.score, p.tokens);
    std::cout << "   why: " << p.Why() << "\n";
    std::cout << Indent(p.text, "   | ") << "\n";
  }
  return 0;
}

int Add(const KbOptions& o) {
  auto kb = OpenKb(o);
  const auto result = kb.Add(o.add_path);
  for (const auto& c : result.copied) std::cout << "added " << c.string() << "\n";
  PrintWarnings(result.reindex);
  std::cout << "reindexed: " << StatsLine(result.reindex) << "\n";
  return 0;
}

std::string Date(double unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm);
  return buf;
}

int Experiences(const KbOptions& o) {
  if (!o.platform.empty()) knowledge::CheckFacetValue("--platform", o.platform, knowledge::KnownPlatforms());
  if (const fs::path path = KbPath(o); !fs::exists(path)) {  // listing reads only: nothing is created for it
    if (o.json) {
      std::cout << "[]\n";
    } else {
      std::cout << fmt::format("knowledge base {}: 0 experiences (it does not exist yet: `kernelevolve optimize` "
                               "writes it)\n", path.string());
    }
    return 0;
  }
  auto kb = OpenKb(o);
  knowledge::ExperienceFilter filter;
  filter.platform = o.platform == "any" ? "" : o.platform;
  filter.problem = o.problem;
  filter.limit = o.limit;
  std::vector<std::string> unreadable;
  const auto records = kb.Experiences(filter, &unreadable);
  // A damaged row is named, not allowed to hide the others.
  for (const std::string& why : unreadable) fmt::print(stderr, "kernelevolve: warning: {}; not listed\n", why);
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : records) {
      out.push_back({{"id", x.id}, {"created_unix_s", x.created_unix_s}, {"problem", x.problem},
                     {"platform", x.platform}, {"machine", x.machine}, {"isa", x.isa},
                     {"operator_family", x.operator_family}, {"op_signature", x.op_signature},
                     {"shape_class", x.shape_class}, {"shapes", x.shapes},
                     {"template", x.template_name}, {"knobs", x.knobs},
                     {"improvements", x.improvements}, {"fitness", x.fitness},
                     {"speedup", x.speedup}, {"speedup_confirmed", x.speedup_confirmed},
                     {"evaluations", x.evaluations}, {"evaluations_to_best", x.evaluations_to_best},
                     {"source_hash", x.source_hash}, {"run_dir", x.run_dir}, {"summary", x.Summary()}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("knowledge base {}: {} experiences\n", kb.Path().string(), records.size());
  if (records.empty()) return 0;
  std::cout << fmt::format("{:>4}  {:<16}  {:<14}  {:<5}  {:<28}  {:<12}  {:>8}  {:>7}  {}\n", "id",
                           "date (UTC)", "problem", "plat", "family", "shape", "speedup",
                           "best@", "knobs");
  for (const auto& x : records) {
    std::cout << fmt::format("{:>4}  {:<16}  {:<14}  {:<5}  {:<28}  {:<12}  {:>7.2f}x  {:>7}  {}\n",
                             x.id, Date(x.created_unix_s), x.problem, x.platform, x.operator_family,
                             x.shape_class, x.speedup,
                             fmt::format("{}/{}", x.evaluations_to_best, x.evaluations), x.knobs.dump());
  }
  return 0;
}

int Reindex(const KbOptions& o) {
  auto kb = OpenKb(o);  // Open reindexes
  PrintWarnings(kb.LastReindex());
  std::cout << fmt::format("knowledge base {}: {}\n", kb.Path().string(), StatsLine(kb.LastReindex()));
  for (const auto& d : kb.Documents()) {
    std::cout << fmt::format("  {}/{} ({} passages): {}\n", d.corpus, d.document, d.passages, d.title);
  }
  return 0;
}

void AddKbFlag(CLI::App* cmd, KbOptions& o) {
  cmd->add_option("--kb", o.kb_path, "knowledge base file (default $KERNELEVOLVE_KB or <cache dir>/knowledge.db)");
}

}  // namespace

void AddKbCommand(CLI::App& app, KbOptions& o) {
  auto* kb = app.add_subcommand("kb", "inspect and extend the knowledge base");
  kb->require_subcommand(1);

  auto* search = kb->add_subcommand("search", "show what retrieval returns for a query, and why");
  search->add_option("query", o.query, "free text: a diagnosis, an error message, a question")->required();
  search->add_option("--platform", o.platform, "cpu | cuda | triton | any");
  search->add_option("--phase", o.phase, "draft | repair | optimize");
  search->add_option("--bottleneck", o.bottleneck,
                     "memory_bound | compute_bound | latency | compile_error | incorrect | crash | timeout");
  search->add_option("-k", o.k, "passages at most")->default_val(5);
  search->add_option("--budget", o.token_budget, "token budget (tokens ~ chars/4)")->default_val(1500);
  search->add_flag("--json", o.json, "print JSON");
  AddKbFlag(search, o);

  auto* add = kb->add_subcommand("add", "copy a markdown document or folder into the user corpus and index it");
  add->add_option("path", o.add_path, ".md file or folder")->required();
  AddKbFlag(add, o);

  auto* experiences = kb->add_subcommand("experiences", "list what past runs learned");
  experiences->add_option("--platform", o.platform, "only this platform");
  experiences->add_option("--problem", o.problem, "only this problem name");
  experiences->add_option("--limit", o.limit, "newest N")->default_val(50);
  experiences->add_flag("--json", o.json, "print JSON");
  AddKbFlag(experiences, o);

  auto* reindex = kb->add_subcommand("reindex", "re-index changed corpus files and list the documents");
  AddKbFlag(reindex, o);
}

int RunKbCommand(const CLI::App& kb, const KbOptions& o) {
  if (kb.got_subcommand("search")) return Search(o);
  if (kb.got_subcommand("add")) return Add(o);
  if (kb.got_subcommand("experiences")) return Experiences(o);
  if (kb.got_subcommand("reindex")) return Reindex(o);
  return 2;
}

}  // namespace kernelevolve::cli

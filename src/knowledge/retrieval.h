// Two-stage retrieval: filter documents by front-matter facets, then rank passages with
// BM25 (SQLite FTS5) and keep the best within a token budget.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kernelevolve::knowledge {

/// What to retrieve. Empty facets (or "any") do not filter.
struct RetrievalQuery {
  std::string text;        // free text: a diagnosis, a compiler message, a question
  std::string platform;    // cpu | cuda | triton | any | ""
  std::string phase;       // draft | repair | optimize | ""
  std::string bottleneck;  // memory_bound | compute_bound | latency | compile_error |
                           // incorrect | crash | timeout | ""
  int k = 5;               // passages at most
  int token_budget = 1500; // total ApproxTokens of the returned passages at most
  int max_per_document = 2;  // passages from one document at most
};

/// One retrieved passage and why it was chosen.
struct Passage {
  int64_t id = -1;
  std::string document;  // path inside its corpus, "hardware/cpu-x86/memory-bandwidth.md"
  std::string corpus;    // label of the corpus folder ("knowledge", "user")
  std::string title;     // the document's title
  std::string heading;   // the section's heading
  std::string text;
  int tokens = 0;        // ApproxTokens(text)
  double bm25 = 0;       // -bm25() of FTS5 (higher is better); 0 without query terms
  double boost = 1;      // 1 + 0.25 per facet the document names explicitly (not via "any")
  double score = 0;      // bm25 * boost: the ranking key
  std::vector<std::string> matched_filters;  // "platform=cpu (doc: cpu)", "phase=repair (doc: any phase)"
  std::vector<std::string> relaxed_filters;  // filters dropped to fill k ("bottleneck")
  std::vector<std::string> matched_terms;    // query terms found in this passage
  /// One line: filters, score and terms, for `kb search` and prompts.
  std::string Why() const;
};

/// BM25 column weights of passages_fts (body, heading, title, tags): words in a heading,
/// title or tag say more about a passage than the same word in its body. Chosen by hand
/// on the built-in corpus.
inline constexpr double kBm25Weights[4] = {1.0, 2.0, 3.0, 2.0};

/// Runs the query on an open knowledge database. Stage 1 keeps the documents whose
/// platforms contain query.platform or "any", whose phases contain query.phase (or are
/// empty), and whose bottlenecks contain query.bottleneck (or are empty). Stage 2 ranks
/// their passages by BM25 over the query terms (plus the bottleneck as a phrase) times
/// the facet boost, and takes them best first while they fit k, max_per_document and the
/// token budget. When fewer than k are found, the bottleneck filter and then the phase
/// filter are relaxed (never the platform); such passages list the relaxed filter.
/// With no query terms, passages of the filtered documents come in document order.
/// Throws InvalidInputError for a facet value outside its vocabulary or k < 1, IoError
/// on a database failure.
std::vector<Passage> RetrievePassages(sqlite3* db, const std::filesystem::path& db_path,
                                      const RetrievalQuery& query);

}  // namespace kernelevolve::knowledge

#include "knowledge/retrieval.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "knowledge/front_matter.h"
#include "knowledge/query_terms.h"
#include "store/sqlite_statement.h"

namespace kernelevolve::knowledge {
namespace {

namespace fs = std::filesystem;
using store::Statement;

struct DocFacets {
  int64_t id = 0;
  std::string rel_path, corpus, title;
  std::vector<std::string> platforms, phases, bottlenecks;
};

/// The result of stage 1 for one document at one relaxation level.
struct Verdict {
  bool eligible = false;
  int explicit_matches = 0;
  std::vector<std::string> matched;
  std::vector<std::string> relaxed;
};

std::vector<std::string> JsonList(const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_array()) return {};
  return doc.get<std::vector<std::string>>();
}

std::vector<DocFacets> LoadDocs(sqlite3* db, const fs::path& db_path) {
  std::vector<DocFacets> docs;
  Statement q(db,
              "SELECT id, rel_path, corpus, title, platforms, phases, bottlenecks FROM documents "
              "ORDER BY corpus, rel_path",
              db_path);
  while (q.Step()) {
    docs.push_back(DocFacets{q.Int("id"), q.Text("rel_path"), q.Text("corpus"), q.Text("title"),
                             JsonList(q.Text("platforms")), JsonList(q.Text("phases")),
                             JsonList(q.Text("bottlenecks"))});
  }
  return docs;
}

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

/// One facet: `wanted` empty or "any" does not filter; a document list that is empty
/// (or holds "any") accepts every value.
bool CheckFacet(const char* name, const std::string& wanted, const std::vector<std::string>& doc,
                bool relaxed, Verdict& v) {
  if (wanted.empty() || wanted == "any") return true;
  if (Contains(doc, wanted)) {
    v.matched.push_back(fmt::format("{}={} (doc: {})", name, wanted, fmt::join(doc, ",")));
    ++v.explicit_matches;
    return true;
  }
  if (doc.empty() || Contains(doc, "any")) {
    v.matched.push_back(fmt::format("{}={} (doc: any {})", name, wanted, name));
    return true;
  }
  if (relaxed) {
    v.relaxed.push_back(fmt::format("{} (doc: {})", name, fmt::join(doc, ",")));
    return true;
  }
  return false;
}

/// level 0: every filter; 1: bottleneck relaxed; 2: bottleneck and phase relaxed.
Verdict Judge(const DocFacets& d, const RetrievalQuery& q, int level) {
  Verdict v;
  v.eligible = CheckFacet("platform", q.platform, d.platforms, false, v) &&
               CheckFacet("phase", q.phase, d.phases, level >= 2, v) &&
               CheckFacet("bottleneck", q.bottleneck, d.bottlenecks, level >= 1, v);
  return v;
}

std::string IdList(const std::vector<int64_t>& ids) {
  return fmt::format("{}", fmt::join(ids, ","));
}

/// A stage-2 hit before it is resolved against its document.
struct Hit {
  int64_t doc_id = 0;
  Passage passage;
};

/// Stage 2 for one set of documents: passages with their BM25 score, best first.
std::vector<Hit> RankPassages(sqlite3* db, const fs::path& db_path,
                                  const std::vector<int64_t>& doc_ids, const std::string& match) {
  const std::string weights = fmt::format("{}, {}, {}, {}", kBm25Weights[0], kBm25Weights[1],
                                          kBm25Weights[2], kBm25Weights[3]);
  const std::string sql =
      match.empty()
          ? fmt::format(
                "SELECT p.id AS id, p.document_id AS doc, p.text AS text, p.tokens AS tokens, "
                "s.heading AS heading, 0.0 AS score FROM passages p JOIN sections s ON s.id = "
                "p.section_id WHERE p.document_id IN ({}) ORDER BY p.document_id, s.ordinal, "
                "p.ordinal LIMIT 400",
                IdList(doc_ids))
          : fmt::format(
                "SELECT p.id AS id, p.document_id AS doc, p.text AS text, p.tokens AS tokens, "
                "s.heading AS heading, -bm25(passages_fts, {0}) AS score FROM passages_fts JOIN "
                "passages p ON p.id = passages_fts.rowid JOIN sections s ON s.id = p.section_id "
                "WHERE passages_fts MATCH :match AND p.document_id IN ({1}) ORDER BY "
                "bm25(passages_fts, {0}) LIMIT 400",
                weights, IdList(doc_ids));
  Statement q(db, sql, db_path);
  if (!match.empty()) q.Bind(":match", match);
  std::vector<Hit> out;
  while (q.Step()) {
    Hit h;
    h.doc_id = q.Int("doc");
    h.passage.id = q.Int("id");
    h.passage.text = q.Text("text");
    h.passage.tokens = std::max(1, static_cast<int>(q.Int("tokens")));
    h.passage.heading = q.Text("heading");
    h.passage.bm25 = q.Real("score");
    out.push_back(std::move(h));
  }
  return out;
}

void FillMatchedTerms(sqlite3* db, const fs::path& db_path, const std::vector<std::string>& terms,
                      std::vector<Passage>& passages) {
  if (passages.empty()) return;
  std::vector<int64_t> ids;
  for (const auto& p : passages) ids.push_back(p.id);
  for (const std::string& term : terms) {
    Statement q(db,
                fmt::format("SELECT rowid AS id FROM passages_fts WHERE passages_fts MATCH :m AND "
                            "rowid IN ({})",
                            IdList(ids)),
                db_path);
    q.Bind(":m", FtsPhrase(term));
    std::set<int64_t> hits;
    while (q.Step()) hits.insert(q.Int("id"));
    for (auto& p : passages) {
      if (hits.count(p.id) > 0) p.matched_terms.push_back(term);
    }
  }
}

void Validate(const RetrievalQuery& q) {
  if (!q.platform.empty()) CheckFacetValue("--platform", q.platform, KnownPlatforms());
  if (!q.phase.empty()) CheckFacetValue("--phase", q.phase, KnownPhases());
  if (!q.bottleneck.empty()) CheckFacetValue("--bottleneck", q.bottleneck, KnownBottlenecks());
  if (q.k < 1) throw core::InvalidInputError(fmt::format("-k must be at least 1, got {}", q.k));
}

}  // namespace

std::string Passage::Why() const {
  std::string why = matched_filters.empty() ? "no filters"
                                            : fmt::format("{}", fmt::join(matched_filters, "; "));
  if (!relaxed_filters.empty()) why += fmt::format("; relaxed: {}", fmt::join(relaxed_filters, "; "));
  why += fmt::format("; bm25 {:.2f} x boost {:.2f} = {:.2f}", bm25, boost, score);
  why += matched_terms.empty() ? "; no query terms matched"
                               : fmt::format("; terms: {}", fmt::join(matched_terms, ", "));
  return why;
}

std::vector<Passage> RetrievePassages(sqlite3* db, const fs::path& db_path, const RetrievalQuery& query) {
  Validate(query);
  std::vector<std::string> terms = QueryTerms(query.text);
  if (!query.bottleneck.empty()) {
    std::string phrase = query.bottleneck;
    std::replace(phrase.begin(), phrase.end(), '_', ' ');
    if (!Contains(terms, phrase)) terms.push_back(phrase);
  }
  const std::string match = query.text.empty() ? "" : FtsOrQuery(terms);
  const std::vector<DocFacets> docs = LoadDocs(db, db_path);
  std::map<int64_t, const DocFacets*> by_id;
  for (const auto& d : docs) by_id[d.id] = &d;

  std::vector<Passage> chosen;
  std::map<int64_t, int> per_doc;
  std::set<int64_t> considered;
  int budget = query.token_budget;
  const int max_level = !query.phase.empty() ? 2 : !query.bottleneck.empty() ? 1 : 0;
  for (int level = 0; level <= max_level && static_cast<int>(chosen.size()) < query.k; ++level) {
    std::map<int64_t, Verdict> verdicts;
    std::vector<int64_t> ids;
    for (const auto& d : docs) {
      if (considered.count(d.id) > 0) continue;
      Verdict v = Judge(d, query, level);
      if (!v.eligible) continue;
      considered.insert(d.id);
      ids.push_back(d.id);
      verdicts[d.id] = std::move(v);
    }
    if (ids.empty()) continue;
    std::vector<Hit> ranked = RankPassages(db, db_path, ids, match);
    for (Hit& h : ranked) {
      const DocFacets& d = *by_id.at(h.doc_id);
      const Verdict& v = verdicts.at(h.doc_id);
      Passage& p = h.passage;
      p.document = d.rel_path;
      p.corpus = d.corpus;
      p.title = d.title;
      p.matched_filters = v.matched;
      p.relaxed_filters = v.relaxed;
      p.boost = 1.0 + 0.25 * v.explicit_matches;
      p.score = p.bm25 * p.boost;
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const Hit& a, const Hit& b) {
      return a.passage.score > b.passage.score;
    });
    for (Hit& h : ranked) {
      if (static_cast<int>(chosen.size()) >= query.k) break;
      int& count = per_doc[h.doc_id];
      if (count >= query.max_per_document || h.passage.tokens > budget) continue;
      ++count;
      budget -= h.passage.tokens;
      chosen.push_back(std::move(h.passage));
    }
  }
  FillMatchedTerms(db, db_path, terms, chosen);
  return chosen;
}

}  // namespace kernelevolve::knowledge

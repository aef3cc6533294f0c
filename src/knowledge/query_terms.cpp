#include "knowledge/query_terms.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace kernelevolve::knowledge {
namespace {

/// Common English function words that carry no topic (a short list in the spirit of
/// the classic SMART / Snowball stop lists).
const std::set<std::string>& StopWords() {
  static const std::set<std::string> kWords = {
      "a", "about", "after", "again", "all", "also", "an", "and", "any", "are", "as", "at",
      "be", "because", "been", "before", "being", "but", "by", "can", "could", "did", "do",
      "does", "doing", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into",
      "is", "it", "its", "just", "me", "more", "most", "my", "no", "not", "now", "of", "on",
      "once", "only", "or", "other", "our", "out", "over", "same", "should", "so", "some",
      "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
      "this", "those", "through", "to", "too", "under", "until", "up", "use", "very", "was",
      "we", "were", "what", "when", "where", "which", "while", "who", "why", "will", "with",
      "would", "you", "your"};
  return kWords;
}

bool AllDigits(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::vector<std::string> QueryTerms(const std::string& text, size_t max_terms) {
  std::vector<std::string> terms;
  std::set<std::string> seen;
  auto emit = [&](std::vector<std::string>& parts) {
    std::vector<std::string> kept;
    for (auto& p : parts) {
      if (p.size() >= 2 && !AllDigits(p)) kept.push_back(p);
    }
    parts.clear();
    if (kept.empty()) return;
    if (kept.size() == 1 && StopWords().count(kept[0]) > 0) return;
    std::string term;
    for (const auto& k : kept) term += (term.empty() ? "" : " ") + k;
    if (terms.size() < max_terms && seen.insert(term).second) terms.push_back(term);
  };
  std::vector<std::string> parts;
  std::string word;
  for (char raw : text + " ") {
    const unsigned char c = static_cast<unsigned char>(raw);
    if (std::isalnum(c)) {
      word += static_cast<char>(std::tolower(c));
      continue;
    }
    if (!word.empty()) parts.push_back(word);
    word.clear();
    // '_' and '-' between word characters join parts into one phrase.
    if ((raw == '_' || raw == '-') && !parts.empty()) continue;
    emit(parts);
  }
  emit(parts);
  return terms;
}

std::string FtsPhrase(const std::string& term) { return "\"" + term + "\""; }

std::string FtsOrQuery(const std::vector<std::string>& terms) {
  std::string out;
  for (const auto& t : terms) out += (out.empty() ? "" : " OR ") + FtsPhrase(t);
  return out;
}

}  // namespace kernelevolve::knowledge

// Turning free query text into FTS5 terms.
#pragma once

#include <string>
#include <vector>

namespace kernelevolve::knowledge {

/// The distinct search terms of `text`: lowercase runs of letters and digits (an
/// underscore or hyphen joins parts into one phrase, "memory_bound" -> "memory bound"),
/// at least 2 characters, English stop words and pure numbers dropped, in order of first
/// appearance, at most `max_terms`.
std::vector<std::string> QueryTerms(const std::string& text, size_t max_terms = 24);

/// One FTS5 phrase for a term: the term in double quotes (terms hold only [a-z0-9 ]).
std::string FtsPhrase(const std::string& term);

/// The FTS5 MATCH expression "t1" OR "t2" ... for `terms`; empty for no terms.
std::string FtsOrQuery(const std::vector<std::string>& terms);

}  // namespace kernelevolve::knowledge

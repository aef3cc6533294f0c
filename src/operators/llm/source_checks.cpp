#include "operators/llm/source_checks.h"

#include <fmt/format.h>

#include <vector>

namespace kernelevolve::operators::llm {
namespace {

/// Pushes an opening bracket, pops a matching closing one; "" or the problem.
std::string Bracket(char c, std::vector<char>& stack) {
  if (c == '(' || c == '[' || c == '{') {
    stack.push_back(c);
  } else if (c == ')' || c == ']' || c == '}') {
    const char open = c == ')' ? '(' : c == ']' ? '[' : '{';
    if (stack.empty() || stack.back() != open) return fmt::format("unbalanced '{}'", c);
    stack.pop_back();
  }
  return "";
}

/// Moves `i` from an opening quote to its closing one (backslash escapes skipped);
/// "unterminated literal" when a newline or the end comes first, else "".
std::string SkipQuoted(const std::string& s, size_t& i) {
  const char quote = s[i];
  for (++i; i < s.size() && s[i] != quote; ++i) {
    if (s[i] == '\\') ++i;
    if (i < s.size() && s[i] == '\n') return "unterminated literal";
  }
  return "";
}

std::string Unclosed(const std::vector<char>& stack) {
  return stack.empty() ? "" : fmt::format("unbalanced '{}' (code cut short?)", stack.back());
}

}  // namespace

std::string CheckBalanceC(const std::string& s) {
  std::vector<char> stack;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      i = s.find('\n', i);
      if (i == std::string::npos) break;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i = s.find("*/", i + 2);
      if (i == std::string::npos) return "unterminated /* comment";
      ++i;
    } else if (c == '"' || c == '\'') {
      if (std::string problem = SkipQuoted(s, i); !problem.empty()) return problem;
    } else if (std::string problem = Bracket(c, stack); !problem.empty()) {
      return problem;
    }
  }
  return Unclosed(stack);
}

std::string CheckBalancePython(const std::string& s) {
  std::vector<char> stack;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '#') {
      i = s.find('\n', i);
      if (i == std::string::npos) break;
    } else if ((c == '"' || c == '\'') && s.compare(i, 3, std::string(3, c)) == 0) {
      const size_t end = s.find(std::string(3, c), i + 3);
      if (end == std::string::npos) return "unterminated triple-quoted string";
      i = end + 2;
    } else if (c == '"' || c == '\'') {
      if (std::string problem = SkipQuoted(s, i); !problem.empty()) return problem;
    } else if (std::string problem = Bracket(c, stack); !problem.empty()) {
      return problem;
    }
  }
  return Unclosed(stack);
}

}  // namespace kernelevolve::operators::llm

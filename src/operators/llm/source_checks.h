// Cheap static checks of a model's code before it costs a build: bracket balance in C-like
// sources (C++, CUDA C++) and in Python (Triton). A model cut off at max_tokens leaves
// brackets open; these name the first one.
#pragma once

#include <string>

namespace kernelevolve::operators::llm {

/// "" when (), [] and {} balance in a C or C++ source outside // and /* */ comments,
/// string and char literals; else the first problem ("unbalanced '}'", "unbalanced '{'
/// (code cut short?)", "unterminated /* comment", "unterminated literal").
std::string CheckBalanceC(const std::string& source);

/// "" when (), [] and {} balance in a Python source outside # comments and string
/// literals ('...', "...", and triple-quoted ones, which may span lines); else the
/// first problem, worded as CheckBalanceC's ("unterminated triple-quoted string").
std::string CheckBalancePython(const std::string& source);

}  // namespace kernelevolve::operators::llm

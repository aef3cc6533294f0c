// Typed errors for conditions that end an operation (DuckDB style). Candidate
// failures are never exceptions: they are Status values inside results.
#pragma once

#include <stdexcept>
#include <string>

namespace kernelevolve::core {

/// Base of every error the tool raises on purpose. `what()` is one readable line.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Bad user input: a broken problem file, a bad flag, an unusable configuration.
/// The CLI prints the message and exits with code 2.
class InvalidInputError : public Error {
 public:
  explicit InvalidInputError(const std::string& message) : Error(message) {}
};

/// A file or process operation failed (cannot write the run directory, cannot spawn).
class IoError : public Error {
 public:
  explicit IoError(const std::string& message) : Error(message) {}
};

/// A broken invariant inside kernelevolve itself: a bug to report.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message) : Error(message) {}
};

}  // namespace kernelevolve::core

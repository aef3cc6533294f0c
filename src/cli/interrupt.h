// Ctrl-C / SIGTERM: the first one asks the search to stop after the candidates in
// flight (results are still written and the run can be resumed); a second one exits.
#pragma once

#include <atomic>

namespace kernelevolve::cli {

/// Installs SIGINT and SIGTERM handlers (idempotent). Returns the flag they set.
const std::atomic<bool>* InstallInterruptHandler();
/// The flag the handlers set (valid whether or not they are installed yet).
const std::atomic<bool>* InterruptFlag();
/// Whether an interrupt arrived.
bool Interrupted();
/// The first signal received (SIGINT or SIGTERM), 0 if none.
int InterruptSignal();

}  // namespace kernelevolve::cli

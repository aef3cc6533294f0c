// Ctrl-C / SIGTERM: the first one asks the search to stop after the candidates in
// flight (results are still written and the run can be resumed); a second one exits.
#pragma once

#include <atomic>
#include <string_view>

namespace kernelevolve::cli {

/// Installs SIGINT and SIGTERM handlers (idempotent). Returns the flag they set. The
/// first signal prints "kernelevolve: stopping after the current step (...); " and
/// `what_next`, the hint of the first caller that gave one (a bench's, not that of the
/// optimize runs inside it); the whole message is cut at 511 bytes.
const std::atomic<bool>* InstallInterruptHandler(
    std::string_view what_next = "the run can be continued with `kernelevolve resume`");
/// The flag the handlers set (valid whether or not they are installed yet).
const std::atomic<bool>* InterruptFlag();
/// Whether an interrupt arrived.
bool Interrupted();
/// The first signal received (SIGINT or SIGTERM), 0 if none.
int InterruptSignal();

}  // namespace kernelevolve::cli

#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace kernelevolve::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};

void OnSignal(int signal) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, signal);
  if (g_interrupted.exchange(true)) {
    ::_exit(128 + signal);  // second signal: leave now (every commit is already durable)
  }
  static const char kMessage[] =
      "\nkernelevolve: stopping after the current step (the candidate in flight, if any; a "
      "second Ctrl-C or SIGTERM quits at once); the run can be continued with `kernelevolve "
      "resume`\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
}

}  // namespace

const std::atomic<bool>* InstallInterruptHandler() {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  return &g_interrupted;
}

const std::atomic<bool>* InterruptFlag() { return &g_interrupted; }
bool Interrupted() { return g_interrupted.load(); }
int InterruptSignal() { return g_signal.load(); }

}  // namespace kernelevolve::cli

#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace kernelevolve::cli {
namespace {

std::atomic<bool> g_interrupted{false};

void OnSignal(int signal) {
  if (g_interrupted.exchange(true)) {
    ::_exit(128 + signal);  // second signal: leave now (every commit is already durable)
  }
  static const char kMessage[] =
      "\nkernelevolve: stopping after the candidate in flight (press Ctrl-C again to quit "
      "at once); the run can be continued with `kernelevolve resume`\n";
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

bool Interrupted() { return g_interrupted.load(); }

}  // namespace kernelevolve::cli

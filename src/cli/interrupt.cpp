#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace kernelevolve::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};
// The message the first signal prints, composed before any handler is installed (a
// signal handler may only call async-signal-safe functions such as write).
char g_message[512];
size_t g_message_length = 0;

void OnSignal(int signal) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, signal);
  if (g_interrupted.exchange(true)) {
    ::_exit(128 + signal);  // second signal: leave now (every commit is already durable)
  }
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, g_message, g_message_length);
}

}  // namespace

const std::atomic<bool>* InstallInterruptHandler(std::string_view what_next) {
  if (g_message_length == 0) {
    static constexpr std::string_view kHead =
        "\nkernelevolve: stopping after the current step (the candidate in flight, if any; a second Ctrl-C or "
        "SIGTERM quits at once); ";
    const size_t hint = std::min<size_t>(what_next.size(), sizeof(g_message) - kHead.size() - 1);
    std::memcpy(g_message, kHead.data(), kHead.size());
    std::memcpy(g_message + kHead.size(), what_next.data(), hint);
    g_message[kHead.size() + hint] = '\n';
    g_message_length = kHead.size() + hint + 1;
  }
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

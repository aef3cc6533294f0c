#include "platforms/cpu/harness_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <new>

#include <nlohmann/json.hpp>

namespace kernelevolve::platforms::cpu {
namespace {

constexpr std::size_t kAlignment = 64;             // harness_tensors.h: kBufferAlignment
constexpr unsigned char kCanary = 0xA5;
constexpr std::size_t kMaxGuards = 2048;            // two per buffer
constexpr std::size_t kAltStackBytes = 64 * 1024;

/// One guard page and the verdict line written when it is touched.
struct GuardEntry {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  char* verdict = nullptr;  // "\n{...}\n", owned
  std::size_t verdict_bytes = 0;
};

GuardEntry g_guards[kMaxGuards];
int g_verdict_fd = -1;

std::size_t PageSize() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

std::size_t RoundUp(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

void Register(std::byte* page, std::size_t page_bytes, const std::string& message) {
  nlohmann::json verdict = {{"status", "rejected_by_check"}, {"message", message},
                            {"correct", false}, {"checks", nlohmann::json::array()}};
  std::string line = "\n" + verdict.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  for (auto& entry : g_guards) {
    if (entry.begin != 0) continue;
    entry.verdict = new char[line.size()];
    std::memcpy(entry.verdict, line.data(), line.size());
    entry.verdict_bytes = line.size();
    entry.end = reinterpret_cast<uintptr_t>(page) + page_bytes;
    entry.begin = reinterpret_cast<uintptr_t>(page);  // last: the handler keys on begin
    return;
  }
  // Table full: the page still faults, reported as a plain crash.
}

void Unregister(std::byte* page) {
  for (auto& entry : g_guards) {
    if (entry.begin != reinterpret_cast<uintptr_t>(page)) continue;
    entry.begin = 0;
    delete[] entry.verdict;
    entry = GuardEntry{};
  }
}

void OnFault(int signal, siginfo_t* info, void*) {
  uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const auto& entry : g_guards) {
    if (entry.begin == 0 || address < entry.begin || address >= entry.end) continue;
    if (g_verdict_fd >= 0) {
      const char* p = entry.verdict;
      std::size_t left = entry.verdict_bytes;
      while (left > 0) {
        ssize_t n = write(g_verdict_fd, p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<std::size_t>(n);
      }
      _exit(0);
    }
    break;
  }
  // Not a guard page: SA_RESETHAND has restored the default action, so returning
  // re-runs the faulting instruction and the process dies by the signal as before
  // (no sigaction call here: the system-call filter forbids it).
  (void)signal;
}

}  // namespace

GuardedBuffer::GuardedBuffer(std::size_t bytes, const std::string& name) : name_(name), bytes_(bytes) {
  const std::size_t page = PageSize();
  const std::size_t span = RoundUp(std::max(bytes, kAlignment), kAlignment);
  const std::size_t data_pages = RoundUp(span, page);
  map_bytes_ = data_pages + 2 * page;
  void* map = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::bad_alloc();
  map_ = static_cast<std::byte*>(map);
  if (mprotect(map_, page, PROT_NONE) != 0 || mprotect(map_ + page + data_pages, page, PROT_NONE) != 0) {
    munmap(map_, map_bytes_);
    throw std::bad_alloc();
  }
  data_ = map_ + page + (data_pages - span);
  front_ = data_pages - span;
  back_ = span - bytes_;
  Register(map_, page, "accessed memory outside " + name_ + ": before its start (guard page)");
  Register(map_ + page + data_pages, page, "accessed memory outside " + name_ + ": past its end (guard page)");
  WriteCanaries();
}

GuardedBuffer::~GuardedBuffer() {
  if (map_ == nullptr) return;
  const std::size_t page = PageSize();
  Unregister(map_);
  Unregister(map_ + map_bytes_ - page);
  munmap(map_, map_bytes_);
}

GuardedBuffer::GuardedBuffer(GuardedBuffer&& other) noexcept
    : name_(std::move(other.name_)), map_(other.map_), map_bytes_(other.map_bytes_), data_(other.data_),
      bytes_(other.bytes_), front_(other.front_), back_(other.back_) {
  other.map_ = nullptr;
}

void GuardedBuffer::WriteCanaries() {
  std::memset(data_ - front_, kCanary, front_);
  std::memset(data_ + bytes_, kCanary, back_);
}

std::optional<std::string> GuardedBuffer::CheckCanaries() const {
  auto changed = [](const std::byte* p, std::size_t n) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; ++i) count += static_cast<unsigned char>(p[i]) != kCanary;
    return count;
  };
  if (std::size_t n = changed(data_ - front_, front_); n > 0) {
    return "wrote outside " + name_ + ": " + std::to_string(n) + " byte(s) before its start changed";
  }
  if (std::size_t n = changed(data_ + bytes_, back_); n > 0) {
    return "wrote outside " + name_ + ": " + std::to_string(n) + " byte(s) after its end changed";
  }
  return std::nullopt;
}

void InstallGuardFaultHandler(int verdict_fd) {
  g_verdict_fd = verdict_fd;
  static std::byte* alt_stack = new std::byte[kAltStackBytes];
  stack_t stack{};
  stack.ss_sp = alt_stack;
  stack.ss_size = kAltStackBytes;
  sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_sigaction = OnFault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, nullptr);
  sigaction(SIGBUS, &action, nullptr);
}

}  // namespace kernelevolve::platforms::cpu

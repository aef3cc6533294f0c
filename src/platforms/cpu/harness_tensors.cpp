#include "platforms/cpu/harness_tensors.h"

#include <cxxabi.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <typeinfo>

#include "core/error.h"

namespace kernelevolve::platforms::cpu {
namespace {

constexpr std::size_t kCacheLine = 64;  // bytes, x86-64 and most AArch64 cores
// Below this many output bytes one thread poisons: a parallel region costs more than
// the memset (our choice; about an L2's worth on one core).
constexpr std::size_t kParallelPoisonBytes = 256 * 1024;

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// Readable type name of an exception ("std::runtime_error").
std::string TypeName(const std::type_info& type) {
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string text = status == 0 && name ? name : type.name();
  std::free(name);
  return text;
}

}  // namespace

std::unique_ptr<std::byte, void (*)(void*)> AllocateAligned(std::size_t bytes) {
  void* p = nullptr;
  std::size_t size = std::max(bytes, kBufferAlignment);
  if (posix_memalign(&p, kBufferAlignment, size) != 0) throw std::bad_alloc();
  return {static_cast<std::byte*>(p), &std::free};
}

TensorSet::TensorSet(const std::vector<core::TensorSpec>& specs) : specs_(specs) {
  for (auto& spec : specs_) {
    buffers_.emplace_back(static_cast<std::size_t>(spec.NumBytes()), spec.name);
    DLTensor view{};
    view.data = buffers_.back().Data();
    view.device = DLDevice{kDLCPU, 0};
    view.ndim = static_cast<int32_t>(spec.shape.size());
    view.dtype = core::ToDLDataType(spec.dtype);
    view.shape = spec.shape.data();  // specs_ is never resized after this loop
    view.strides = nullptr;
    view.byte_offset = 0;
    views_.push_back(view);
  }
}

void TensorSet::CopyFrom(int i, const eval::HostTensor& tensor) {
  const auto& spec = Spec(i);
  if (tensor.dtype != spec.dtype || tensor.shape != spec.shape) {
    throw core::InvalidInputError("fixture tensor '" + spec.name + "' is " +
                                  std::string(core::DTypeName(tensor.dtype)) + ShapeText(tensor.shape) +
                                  " but the manifest says " + std::string(core::DTypeName(spec.dtype)) +
                                  ShapeText(spec.shape) + "; regenerate the fixtures");
  }
  if (tensor.bytes.size() != NumBytes(i)) {
    throw core::InvalidInputError("fixture tensor '" + spec.name + "' has the wrong byte size");
  }
  std::memcpy(Data(i), tensor.bytes.data(), NumBytes(i));
}

void TensorSet::FillPoison() { FillPoison(views_.data()); }

void TensorSet::FillPoison(DLTensor* views) const {
  std::size_t total = 0;
  for (int i = 0; i < Count(); ++i) total += NumBytes(i);
  // Written by the OpenMP threads the kernel will run on, each its contiguous static
  // share (as a `schedule(static)` loop or PyTorch's parallel_for splits the output),
  // so the poisoned lines wait in the cache of the thread that writes them next, as a
  // kernel's own previous output does between back-to-back eager calls. Poisoned by
  // one thread, every line started in that thread's cache and each other thread's
  // write fetched it from there: a cost eager PyTorch never pays, large on many cores.
#pragma omp parallel if (total >= kParallelPoisonBytes)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto n = static_cast<std::size_t>(omp_get_num_threads());
    for (int i = 0; i < Count(); ++i) {
      // All bits set is a NaN in every IEEE 754 binary format (exponent all ones,
      // nonzero significand; IEEE 754-2019, 3.4): one memset poisons float32, float64,
      // float16 and bfloat16 alike.
      const int byte = core::IsFloatingPoint(Spec(i).dtype) ? 0xFF : 0x5A;
      const std::size_t bytes = NumBytes(i);
      // Shares end on cache-line boundaries (the last takes the rest).
      const std::size_t begin = bytes * t / n / kCacheLine * kCacheLine;
      const std::size_t end = t + 1 == n ? bytes : bytes * (t + 1) / n / kCacheLine * kCacheLine;
      if (end > begin) std::memset(static_cast<std::byte*>(views[i].data) + begin, byte, end - begin);
    }
  }
}

eval::HostTensor TensorSet::ToHost(int i) const {
  const auto& spec = Spec(i);
  eval::HostTensor tensor;
  tensor.name = spec.name;
  tensor.dtype = spec.dtype;
  tensor.shape = spec.shape;
  tensor.bytes.resize(NumBytes(i));
  std::memcpy(tensor.bytes.data(), views_[static_cast<std::size_t>(i)].data, NumBytes(i));
  return tensor;
}

std::optional<std::string> TensorSet::CheckCanaries() const {
  for (const auto& buffer : buffers_) {
    if (auto reason = buffer.CheckCanaries()) return reason;
  }
  return std::nullopt;
}

bool TensorSet::Equals(int i, const eval::HostTensor& tensor) const {
  return tensor.bytes.size() == NumBytes(i) &&
         std::memcmp(views_[static_cast<std::size_t>(i)].data, tensor.bytes.data(), NumBytes(i)) == 0;
}

std::optional<std::string> CallEntry(EntryFn entry, TensorSet& inputs, DLTensor* outputs,
                                     int32_t num_outputs) {
  int rc = 0;
  try {
    rc = entry(inputs.Views(), inputs.Count(), outputs, num_outputs);
  } catch (const std::bad_alloc&) {
    ExitOutOfMemory();
  } catch (const std::exception& e) {
    return "kernel threw " + TypeName(typeid(e)) + ": " + e.what();
  } catch (...) {
    return std::string("kernel threw an exception of unknown type");
  }
  if (rc != 0) return "kernel returned " + std::to_string(rc);
  return std::nullopt;
}

void ExitOutOfMemory() {
  static const char kMessage[] = "out of memory\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
  std::_Exit(3);
}

}  // namespace kernelevolve::platforms::cpu

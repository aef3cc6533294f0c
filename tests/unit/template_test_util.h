// Helpers for the template operator tests: hand-built op graphs, compiling
// generated candidates with the CPU builder's flags, and calling them in-process.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_isa.h"
#include "core/op_graph.h"
#include "core/problem.h"
#include "platforms/cpu/candidate_abi.h"
#include "platforms/cpu/cpu_builder.h"
#include "platforms/native_build.h"

namespace kernelevolve::template_test {

inline core::OpArg Ref(const std::string& name, const std::string& node) {
  core::OpArg a;
  a.name = name;
  a.ref = node;
  return a;
}

inline core::OpArg Val(const std::string& name, nlohmann::json value) {
  core::OpArg a;
  a.name = name;
  a.value = std::move(value);
  return a;
}

/// Builds a Problem whose graph has float32 inputs of one shape and calls on them.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::vector<int64_t> shape) : shape_(std::move(shape)) {}

  /// Adds a float32 placeholder with the next ABI index; returns its name.
  std::string Input(const std::string& name) {
    core::OpNode n;
    n.name = name;
    n.kind = core::OpNodeKind::kPlaceholder;
    n.shape = shape_;
    n.abi_index = next_abi_++;
    problem_.graph.nodes.push_back(n);
    core::TensorSpec spec;
    spec.name = "input." + std::to_string(n.abi_index);
    spec.shape = shape_;
    problem_.inputs.push_back(spec);
    return name;
  }
  /// Adds a call node of the builder's shape; returns its name.
  std::string Call(const std::string& name, const std::string& target,
                   std::vector<core::OpArg> args, core::DType dtype = core::DType::kFloat32) {
    core::OpNode n;
    n.name = name;
    n.target = target;
    n.args = std::move(args);
    n.shape = shape_;
    n.dtype = dtype;
    problem_.graph.nodes.push_back(n);
    return name;
  }
  /// Mutable access for tests that break the graph on purpose.
  core::OpGraph& Graph() { return problem_.graph; }

  core::Problem Finish(const std::string& output, int threads = 2) {
    problem_.graph.outputs = {output};
    core::TensorSpec spec;
    spec.name = "output.0";
    spec.role = core::TensorRole::kOutput;
    spec.shape = shape_;
    problem_.outputs = {spec};
    problem_.name = output;
    problem_.threads = threads;
    return problem_;
  }

 private:
  std::vector<int64_t> shape_;
  core::Problem problem_;
  int next_abi_ = 0;
};

/// The captured graph tests/unit/data/rowwise/<name>.json (written by make_cases.py) as a
/// Problem named `name`, with one empty TensorSpec per placeholder (the ABI inputs the
/// CUDA templates count); no fixtures, default threads.
inline core::Problem CapturedCaseWithInputs(const std::string& name) {
  std::ifstream in(std::filesystem::path(KE_TEST_DATA_DIR) / "unit" / "data" / "rowwise" /
                   (name + ".json"));
  core::Problem p;
  p.name = name;
  p.graph = core::OpGraphFromJson(nlohmann::json::parse(in));
  for (const auto& n : p.graph.nodes) {
    if (n.kind == core::OpNodeKind::kPlaceholder) p.inputs.emplace_back();
  }
  return p;
}

/// y = target(x, extra...) over float32 `shape`, one thread.
inline core::Problem Unary(const std::string& target, std::vector<core::OpArg> extra,
                           std::vector<int64_t> shape) {
  GraphBuilder g(std::move(shape));
  const auto x = g.Input("x");
  std::vector<core::OpArg> args = {Ref("self", x)};
  args.insert(args.end(), extra.begin(), extra.end());
  g.Call("y", target, args);
  return g.Finish("y", 1);
}

/// y = softmax (log: log_softmax) of float32 x of `shape` over its last dim, one thread.
inline core::Problem Softmax(bool log, std::vector<int64_t> shape) {
  GraphBuilder g(shape);
  const auto x = g.Input("x");
  g.Call("y", log ? "aten._log_softmax.default" : "aten._softmax.default",
         {Ref("self", x), Val("dim", static_cast<int>(shape.size()) - 1),
          Val("half_to_float", false)});
  return g.Finish("y", 1);
}

/// A generated source compiled to a shared object and loaded into this process.
struct LoadedKernel {
  void* handle = nullptr;
  platforms::cpu::EntryFn entry = nullptr;
  std::string log;  // compiler output (and the load error, if any)
  ~LoadedKernel() {
    if (handle != nullptr) dlclose(handle);
  }
};

/// Compiles one source with the CPU builder's flags (plus `extra_flags`) and dlopens it.
inline std::unique_ptr<LoadedKernel> CompileAndLoad(const std::string& source, int index,
                                                    const std::string& extra_flags = "") {
  // Candidates link libgomp; once the last one is dlclosed libgomp would be unmapped
  // while its idle pool threads still live (they then crash). Pin it for the process.
  static void* const pinned_gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NODELETE);
  (void)pinned_gomp;
  static std::atomic<int> counter{0};
  auto kernel = std::make_unique<LoadedKernel>();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ke_template_test_" + std::to_string(getpid()) + "_" +
                    std::to_string(counter.fetch_add(1)) + "_" + std::to_string(index));
  std::filesystem::create_directories(dir);
  const auto src = dir / "candidate.cpp";
  const auto so = dir / "candidate.so";
  const auto log = dir / "build.log";
  std::ofstream(src) << source;
  // The include folder the builder uses ($KE_DLPACK_INCLUDE_DIR on a machine without
  // libdlpack-dev, such as the GPU machine).
  std::string flags = "-I'" + platforms::FindDLPackIncludeDir().string() + "' ";
  for (const auto& f : platforms::cpu::CandidateCompileFlags()) flags += f + " ";
  const std::string cmd = "g++ " + flags + extra_flags +
                          " -o '" + so.string() + "' '" + src.string() + "' > '" + log.string() +
                          "' 2>&1";
  const int rc = std::system(cmd.c_str());
  {
    std::ifstream in(log);
    kernel->log.assign(std::istreambuf_iterator<char>(in), {});
  }
  if (rc == 0) {
    kernel->handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (kernel->handle == nullptr) {
      kernel->log += dlerror();
    } else {
      kernel->entry = reinterpret_cast<platforms::cpu::EntryFn>(
          dlsym(kernel->handle, platforms::cpu::kEntrySymbol));
      if (kernel->entry == nullptr) kernel->log += "no kernelevolve_entry symbol";
    }
  }
  std::filesystem::remove_all(dir);
  return kernel;
}

/// Compiles every source, two compiler processes at a time (the machine has 2 cores).
inline std::vector<std::unique_ptr<LoadedKernel>> CompileAll(
    const std::vector<std::string>& sources, const std::string& extra_flags = "") {
  std::vector<std::unique_ptr<LoadedKernel>> out(sources.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < sources.size(); i = next.fetch_add(1)) {
      out[i] = CompileAndLoad(sources[i], static_cast<int>(i), extra_flags);
    }
  };
  std::thread a(worker);
  std::thread b(worker);
  a.join();
  b.join();
  return out;
}

/// The flag that makes GCC report vectorized loops in the build log.
inline constexpr const char* kVectorizeReport = "-fopt-info-vec-optimized";

/// The narrowest vectors a `#pragma omp simd` main loop may be vectorized with on this
/// machine, in bytes: 32 where it has 256-bit vectors (x86-64-v3 and v4: GCC picks 32 or
/// 64 bytes on AVX-512 machines, by their tuning's preferred width), else 16 (SSE2).
inline int MinSimdVectorBytes() { return std::min(32, core::HostCpuIsa().vector_bits / 8); }

/// The vector size in bytes of a "loop vectorized using N byte vectors" report line,
/// 0 for any other line.
inline int ReportedVectorBytes(const std::string& line) {
  static const std::string kPhrase = "loop vectorized using ";
  const auto at = line.find(kPhrase);
  if (at == std::string::npos) return 0;
  return std::atoi(line.c_str() + at + kPhrase.size());
}

/// Expects every loop under a `#pragma omp simd` line of `source` to be reported as
/// vectorized with vectors of at least MinSimdVectorBytes() in `log` (built with
/// kVectorizeReport), at one of the three lines after the pragma.
inline void ExpectSimdLoopsVectorized(const std::string& source, const std::string& log) {
  std::istringstream lines(source);
  std::string line;
  int loops = 0;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.rfind("#pragma omp simd", 0) != 0) continue;
    ++loops;
    // GCC reports a loop at its `for` line or, for a braced body, at a body line.
    bool vectorized = false;
    for (int at = number + 1; at <= number + 3; ++at) {
      const std::string where = "candidate.cpp:" + std::to_string(at) + ":";
      std::istringstream report(log);
      for (std::string l; std::getline(report, l);) {
        vectorized = vectorized ||
                     (l.find(where) != std::string::npos && ReportedVectorBytes(l) >= MinSimdVectorBytes());
      }
    }
    EXPECT_TRUE(vectorized) << "loop at line " << number + 1 << " not vectorized with " << MinSimdVectorBytes()
                            << "-byte or wider vectors on " << core::HostCpuIsa().Text() << "; report:\n"
                            << log;
  }
  EXPECT_GT(loops, 0) << "no `#pragma omp simd` loop in the source";
}

inline DLTensor FloatTensor(float* data, std::vector<int64_t>& shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

/// Calls the kernel on float32 inputs of `shape`; returns its return code.
inline int RunKernel(platforms::cpu::EntryFn entry, std::vector<std::vector<float>>& inputs,
                     std::vector<int64_t> shape, std::vector<float>& out) {
  std::vector<DLTensor> in;
  for (auto& v : inputs) in.push_back(FloatTensor(v.data(), shape));
  DLTensor o = FloatTensor(out.data(), shape);
  return entry(in.data(), static_cast<int32_t>(in.size()), &o, 1);
}

/// n randn-like values (scaled by `scale`, deterministic std::mt19937) followed by
/// magnitudes that stress saturation: 0, +-1e-6, +-1, +-3, +-20.5, +-50, +-88.5,
/// +-89, +-100, +-1e4 (when n is large enough; the specials overwrite the tail).
inline std::vector<float> TestValues(size_t n, uint32_t seed, float scale = 2.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen) * scale;
  const float specials[] = {0.0f,   1e-6f,  -1e-6f,  1.0f,   -1.0f, 3.0f,   -3.0f,
                            20.5f,  -20.5f, 50.0f,   -50.0f, 88.5f, -88.5f, 89.0f,
                            -89.0f, 100.0f, -100.0f, 1e4f,   -1e4f};
  const size_t k = std::size(specials);
  for (size_t i = 0; n >= k && i < k; ++i) v[n - k + i] = specials[i];
  return v;
}

/// numpy.allclose rule with atol = rtol = 1e-4 (the float32 default); NaN matches NaN.
inline bool Close(double got, double ref, double tol = 1e-4) {
  if (std::isnan(ref)) return std::isnan(got);
  if (std::isinf(ref)) return got == ref;
  return std::fabs(got - ref) <= tol + tol * std::fabs(ref);
}

/// True when KE_SLOW_TESTS=1 (tests named *_Slow skip otherwise).
inline bool SlowTestsEnabled() {
  const char* v = std::getenv("KE_SLOW_TESTS");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace kernelevolve::template_test

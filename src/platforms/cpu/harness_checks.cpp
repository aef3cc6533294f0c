#include "platforms/cpu/harness_checks.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "eval/tolerance.h"

namespace kernelevolve::platforms::cpu {
namespace {

/// Value of the first element for the message: floats printed, others as hex bytes.
std::string ElementText(const eval::HostTensor& tensor) {
  const std::size_t size = core::DTypeSize(tensor.dtype);
  if (tensor.dtype == core::DType::kFloat32) return fmt::format("{:g}", tensor.Data<float>()[0]);
  if (tensor.dtype == core::DType::kFloat64) return fmt::format("{:g}", tensor.Data<double>()[0]);
  std::string text = "0x";
  for (std::size_t b = size; b-- > 0;) text += fmt::format("{:02x}", static_cast<unsigned>(tensor.bytes[b]));
  return text;
}

bool AllElementsEqual(const eval::HostTensor& tensor) {
  const std::size_t size = core::DTypeSize(tensor.dtype);
  const std::byte* data = tensor.bytes.data();
  for (std::size_t off = size; off + size <= tensor.bytes.size(); off += size) {
    if (std::memcmp(data, data + off, size) != 0) return false;
  }
  return true;
}

SeedFixture LoadFixture(const eval::FixtureManifest& manifest, const eval::SafetensorsFile& file,
                        int seed) {
  SeedFixture fixture;
  fixture.seed = seed;
  for (const auto& spec : manifest.inputs) fixture.inputs.push_back(file.Get(spec.name));
  for (const auto& spec : manifest.outputs) fixture.references.push_back(file.Get(spec.name));
  return fixture;
}

/// The allowance tensor of `reference` in `file` (read from `path`, listed by the
/// manifest for the set `set`: "edge case 'large'", "seed 0"), checked against the
/// format in eval/fixture_manifest.h.
eval::HostTensor LoadAllowance(const eval::SafetensorsFile& file, const std::filesystem::path& path,
                               const std::string& set, const eval::HostTensor& reference) {
  const std::string name = eval::AllowanceTensorName(reference.name);
  const std::string where = fmt::format("{}: tensor '{}' ({})", path.string(), name, set);
  auto it = std::find_if(file.tensors.begin(), file.tensors.end(),
                         [&](const eval::HostTensor& t) { return t.name == name; });
  if (it == file.tensors.end()) {
    throw core::InvalidInputError(where + ": missing, though the manifest lists an allowance for " +
                                  reference.name);
  }
  if (it->dtype != core::DType::kFloat32 || it->shape != reference.shape) {
    throw core::InvalidInputError(fmt::format(
        "{}: must be float32 of {}'s shape [{}], got {} [{}]", where, reference.name,
        fmt::join(reference.shape, ", "), core::DTypeName(it->dtype), fmt::join(it->shape, ", ")));
  }
  const float* values = it->Data<float>();
  for (int64_t i = 0; i < it->NumElements(); ++i) {
    if (!(values[i] >= 0) || !std::isfinite(values[i])) {
      throw core::InvalidInputError(fmt::format(
          "{}: element {} is {:g}; every element must be finite and >= 0", where, i, values[i]));
    }
  }
  return *it;
}

}  // namespace

std::vector<SeedFixture> LoadSeedFixtures(const eval::FixtureManifest& manifest) {
  std::vector<SeedFixture> seeds;
  for (std::size_t k = 0; k < manifest.files.size(); ++k) {
    const eval::SafetensorsFile file = eval::ReadSafetensors(manifest.files[k]);
    SeedFixture fixture = LoadFixture(manifest, file, manifest.seeds[k]);
    const std::string set = fmt::format("seed {}", manifest.seeds[k]);
    for (const auto& reference : fixture.references) {
      fixture.allowances.push_back(manifest.SeedHasAllowance(k, reference.name)
                                       ? std::optional(LoadAllowance(file, manifest.files[k], set, reference))
                                       : std::nullopt);
    }
    seeds.push_back(std::move(fixture));
  }
  return seeds;
}

std::vector<SeedFixture> LoadEdgeCaseFixtures(const eval::FixtureManifest& manifest) {
  std::vector<SeedFixture> edges;
  for (const auto& edge : manifest.edge_cases) {
    const eval::SafetensorsFile file = eval::ReadSafetensors(edge.file);
    SeedFixture fixture = LoadFixture(manifest, file, 0);
    for (const auto& reference : fixture.references) {
      fixture.allowances.push_back(
          edge.HasAllowance(reference.name)
              ? std::optional(LoadAllowance(file, edge.file, fmt::format("edge case '{}'", edge.name), reference))
              : std::nullopt);
    }
    edges.push_back(std::move(fixture));
  }
  return edges;
}

std::vector<eval::HostTensor> TrimBoundedOutputs(const eval::FixtureManifest& manifest,
                                                 std::vector<eval::HostTensor> outputs,
                                                 const SeedFixture& fixture) {
  for (std::size_t i = 0; i < outputs.size() && i < manifest.size_output.size(); ++i) {
    const int size_index = manifest.size_output[i];
    if (size_index < 0) continue;
    const auto& reported = outputs[static_cast<std::size_t>(size_index)];
    const auto& expected = fixture.references[static_cast<std::size_t>(size_index)];
    const auto& reference = fixture.references[i];
    if (reported.bytes == expected.bytes && reference.bytes.size() <= outputs[i].bytes.size()) {
      outputs[i].shape = reference.shape;
      outputs[i].bytes.resize(reference.bytes.size());
      continue;
    }
    // A wrong size: when the kernel's reported shape fits the buffer (every dim within
    // the bound), the output takes that shape, so the comparison's shape mismatch names
    // what the kernel wrote rather than the bound.
    const std::vector<int64_t> bound = outputs[i].shape;
    if (reported.dtype != core::DType::kInt64 || reported.NumElements() != static_cast<int64_t>(bound.size())) continue;
    std::vector<int64_t> shape(reported.Data<int64_t>(), reported.Data<int64_t>() + bound.size());
    bool fits = true;
    for (std::size_t d = 0; d < shape.size(); ++d) fits = fits && shape[d] >= 0 && shape[d] <= bound[d];
    if (!fits) continue;
    int64_t elements = 1;
    for (const int64_t e : shape) elements *= e;
    outputs[i].shape = shape;
    outputs[i].bytes.resize(static_cast<std::size_t>(elements) * core::DTypeSize(outputs[i].dtype));
  }
  return outputs;
}

ThreadCounter::ThreadCounter() { fd_ = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC); }

ThreadCounter::~ThreadCounter() {
  if (fd_ >= 0) close(fd_);
}

int ThreadCounter::Count() const {
  if (fd_ < 0 || lseek(fd_, 0, SEEK_SET) != 0) return -1;
  alignas(8) char buffer[8192];
  int count = 0;
  while (true) {
    long n = syscall(SYS_getdents64, fd_, buffer, sizeof(buffer));
    if (n < 0) return -1;
    if (n == 0) break;
    for (long off = 0; off < n;) {
      // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name
      unsigned short reclen;
      std::memcpy(&reclen, buffer + off + 16, sizeof(reclen));
      const char* name = buffer + off + 19;
      if (name[0] != '.') ++count;
      off += reclen;
    }
  }
  return count;
}

std::optional<std::string> ConstantOutputReason(const eval::HostTensor& output,
                                                const eval::HostTensor& reference) {
  if (output.NumElements() < 2 || output.bytes.size() != reference.bytes.size()) return std::nullopt;
  if (!AllElementsEqual(output) || AllElementsEqual(reference)) return std::nullopt;
  // All NaN is the harness's poison: an unwritten output, reported by the tolerance check.
  if (output.dtype == core::DType::kFloat32 && std::isnan(output.Data<float>()[0])) return std::nullopt;
  if (output.dtype == core::DType::kFloat64 && std::isnan(output.Data<double>()[0])) return std::nullopt;
  return output.name + " is constant (every element equals " + ElementText(output) +
         ") while the reference varies";
}

std::optional<std::string> StaleResultReason(const eval::HostTensor& output, int index, int seed_index,
                                             const std::vector<SeedFixture>& seeds,
                                             const core::Tolerance& tolerance) {
  for (std::size_t other = 0; other < seeds.size(); ++other) {
    if (static_cast<int>(other) == seed_index) continue;
    const auto& reference = seeds[other].references[static_cast<std::size_t>(index)];
    if (reference.bytes == seeds[static_cast<std::size_t>(seed_index)].references[static_cast<std::size_t>(index)].bytes) {
      continue;  // identical references: nothing to tell apart
    }
    if (eval::CompareTensors(output, reference, tolerance).passed) {
      return fmt::format("{} on seed {} is the result for seed {}: a result reused from an earlier call",
                         output.name, seeds[static_cast<std::size_t>(seed_index)].seed, seeds[other].seed);
    }
  }
  return std::nullopt;
}

std::optional<std::string> MutatedInputReason(const TensorSet& inputs, const SeedFixture& fixture) {
  for (int i = 0; i < inputs.Count(); ++i) {
    if (!inputs.Equals(i, fixture.inputs[static_cast<std::size_t>(i)])) return "mutated input " + inputs.Spec(i).name;
  }
  return std::nullopt;
}

eval::HostTensor ViewToHost(const core::TensorSpec& spec, const DLTensor& view) {
  eval::HostTensor tensor;
  tensor.name = spec.name;
  tensor.dtype = spec.dtype;
  tensor.shape = spec.shape;
  tensor.bytes.resize(static_cast<std::size_t>(spec.NumBytes()));
  if (!tensor.bytes.empty()) std::memcpy(tensor.bytes.data(), view.data, tensor.bytes.size());
  return tensor;
}

}  // namespace kernelevolve::platforms::cpu

// The anti-cheat checks the CPU harness runs around each verified kernel call
// (docs/fitness.md lists what each one catches).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/problem.h"
#include "eval/fixture_manifest.h"
#include "eval/safetensors.h"
#include "platforms/cpu/harness_tensors.h"

namespace kernelevolve::platforms::cpu {

/// One seed's fixtures, held in memory: the harness reads every file before the
/// system-call filter closes the file system (syscall_filter.h).
struct SeedFixture {
  int seed = 0;
  std::vector<eval::HostTensor> inputs;      // manifest.inputs order
  std::vector<eval::HostTensor> references;  // manifest.outputs order
  /// manifest.outputs order: the per-element allowance tensor of each output the edge
  /// case (the seed's seed_allowance entry) lists (eval::AllowanceTensorName; float32,
  /// the reference's shape, values >= 0 and finite), nullopt for the others.
  std::vector<std::optional<eval::HostTensor>> allowances;
};

/// Reads every seed file of `manifest`, with the allowance tensors its seed_allowance
/// lists. Throws IoError / InvalidInputError (safetensors.h) when a file is unreadable
/// or lacks a tensor of the manifest, and InvalidInputError as LoadEdgeCaseFixtures for
/// a bad allowance tensor.
std::vector<SeedFixture> LoadSeedFixtures(const eval::FixtureManifest& manifest);

/// Reads every edge-case file of `manifest` (same order; `seed` is 0), with the allowance
/// tensors its edge entries list. Same errors, and InvalidInputError naming the file and
/// tensor when a listed allowance tensor is missing, not float32, not of its reference's
/// shape, or holds a negative or non-finite value.
std::vector<SeedFixture> LoadEdgeCaseFixtures(const eval::FixtureManifest& manifest);

/// Counts this process's threads from a /proc/self/task descriptor opened at
/// construction (so counting still works once the filter denies open).
class ThreadCounter {
 public:
  ThreadCounter();
  ~ThreadCounter();
  ThreadCounter(const ThreadCounter&) = delete;
  ThreadCounter& operator=(const ThreadCounter&) = delete;
  /// Live threads (entries of /proc/self/task); -1 when /proc is unavailable.
  int Count() const;

 private:
  int fd_ = -1;
};

/// "output.0 is constant (every element equals 0) while the reference varies" when
/// every element of `output` has the same bytes and the reference has at least two
/// distinct elements; nullopt otherwise (also for fewer than 2 elements, and for an
/// all-NaN float output: that is the harness's poison, an output left unwritten).
std::optional<std::string> ConstantOutputReason(const eval::HostTensor& output,
                                                const eval::HostTensor& reference);

/// When `output` (output `index` of the call on seed `seed_index`) does not match its
/// own reference but matches, within `tolerance`, output `index` of another seed:
/// "output.0 on seed 1 is the result for seed 2: a result reused from an earlier call".
std::optional<std::string> StaleResultReason(const eval::HostTensor& output, int index, int seed_index,
                                             const std::vector<SeedFixture>& seeds,
                                             const core::Tolerance& tolerance);

/// "mutated input input.0" for the first input of `inputs` whose bytes differ from
/// `fixture.inputs`; nullopt when all are intact.
std::optional<std::string> MutatedInputReason(const TensorSet& inputs, const SeedFixture& fixture);

/// The outputs of one call made comparable with `fixture.references`: a bounded output
/// (manifest.size_output[i] >= 0) whose size tensor in `outputs` equals the reference's
/// is cut to its first NumElements(reference) elements and given the reference's shape
/// (the kernel writes it dense in its actual shape, docs/abi.md); every other output,
/// is returned as is. A bounded one whose reported size is wrong fails its comparison
/// with a shape mismatch (and so does its size tensor): it takes the reported shape when
/// every dim lies within the bound (so the message names what the kernel wrote), else it
/// stays at the bound shape.
std::vector<eval::HostTensor> TrimBoundedOutputs(const eval::FixtureManifest& manifest,
                                                 std::vector<eval::HostTensor> outputs,
                                                 const SeedFixture& fixture);

/// Output `i` of `views` (shaped by `specs`) copied into a HostTensor.
eval::HostTensor ViewToHost(const core::TensorSpec& spec, const DLTensor& view);

}  // namespace kernelevolve::platforms::cpu

// Input sets whose shapes differ per seed, outputs whose shape depends on the data
// (docs/abi.md), and kernels that index past a table: through the real builder and the
// sandboxed harness. The fixtures are written from C++ with references computed here.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>

#include "eval/fixture_manifest.h"
#include "eval/safetensors.h"
#include "platforms/cpu/cpu_platform.h"
#include "platforms/cpu/harness_checks.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

eval::HostTensor Tensor(const std::string& name, core::DType dtype, std::vector<int64_t> shape) {
  eval::HostTensor t{name, dtype, std::move(shape), {}};
  t.bytes.resize(static_cast<std::size_t>(t.NumElements()) * core::DTypeSize(dtype));
  return t;
}

// Bag sum: input.0 indices int64[N] (N differs per seed), input.1 offsets int64[kBags + 1],
// param.weight float32[kRows, kDim] (4096 bytes: a guard page follows its last row),
// output.0 float32[kBags, kDim] = sum of the rows of each bag.
constexpr int64_t kRows = 16, kDim = 64, kBags = 4;
const int64_t kTotals[] = {37, 5, 37};  // seeds 0 and 2 share shapes (the timed refreshes)

core::Problem WriteBagFixtures(const fs::path& dir) {
  core::Problem problem;
  problem.name = "bag_sum";
  problem.fixtures_dir = dir;
  problem.seeds = {0, 1, 2};
  eval::FixtureManifest manifest;
  manifest.problem = problem.name;
  manifest.seeds = problem.seeds;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  eval::HostTensor weight = Tensor("param.weight", core::DType::kFloat32, {kRows, kDim});
  for (int64_t i = 0; i < kRows * kDim; ++i) weight.MutableData<float>()[i] = normal(rng);
  for (int seed : problem.seeds) {
    const int64_t total = kTotals[seed];
    eval::HostTensor indices = Tensor("input.0", core::DType::kInt64, {total});
    eval::HostTensor offsets = Tensor("input.1", core::DType::kInt64, {kBags + 1});
    eval::HostTensor out = Tensor("output.0", core::DType::kFloat32, {kBags, kDim});
    std::uniform_int_distribution<int64_t> row(0, kRows - 1);
    for (int64_t i = 0; i < total; ++i) indices.MutableData<int64_t>()[i] = i == 0 ? kRows - 1 : row(rng);
    for (int64_t b = 0; b <= kBags; ++b) offsets.MutableData<int64_t>()[b] = b == kBags ? total : b * total / (kBags + 1);
    for (int64_t b = 0; b < kBags; ++b) {
      for (int64_t d = 0; d < kDim; ++d) {
        float sum = 0;
        for (int64_t i = offsets.Data<int64_t>()[b]; i < offsets.Data<int64_t>()[b + 1]; ++i) {
          sum += weight.Data<float>()[indices.Data<int64_t>()[i] * kDim + d];
        }
        out.MutableData<float>()[b * kDim + d] = sum;
      }
    }
    const fs::path file = dir / ("seed_" + std::to_string(seed) + ".safetensors");
    eval::WriteSafetensors(file, {indices, offsets, weight, out}, {{"seed", std::to_string(seed)}});
    manifest.files.push_back(file);
    problem.fixture_files.push_back(file);
    manifest.set_shapes.push_back({{"input.0", indices.shape}, {"input.1", offsets.shape},
                                   {"param.weight", weight.shape}, {"output.0", out.shape}});
  }
  manifest.inputs = {{"input.0", core::TensorRole::kInput, {kTotals[0]}, core::DType::kInt64},
                     {"input.1", core::TensorRole::kInput, {kBags + 1}, core::DType::kInt64},
                     {"param.weight", core::TensorRole::kParameter, {kRows, kDim}, core::DType::kFloat32}};
  manifest.outputs = {{"output.0", core::TensorRole::kOutput, {kBags, kDim}, core::DType::kFloat32}};
  manifest.size_output = {-1};
  problem.inputs = manifest.inputs;
  problem.outputs = manifest.outputs;
  std::ofstream(dir / "manifest.json") << eval::FixtureManifestToJson(manifest, dir).dump(2);
  return problem;
}

// Unique: input.0 ids int64[kIds] -> output.0 sorted distinct ids (bounded by kIds, a
// data-dependent length), output.1 inverse int64[kIds], output.0.size int64[1].
constexpr int64_t kIds = 12;

core::Problem WriteUniqueFixtures(const fs::path& dir) {
  core::Problem problem;
  problem.name = "unique";
  problem.fixtures_dir = dir;
  problem.seeds = {0, 1, 2};
  eval::FixtureManifest manifest;
  manifest.problem = problem.name;
  manifest.seeds = problem.seeds;
  for (int seed : problem.seeds) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::uniform_int_distribution<int64_t> id(0, 9);
    eval::HostTensor ids = Tensor("input.0", core::DType::kInt64, {kIds});
    std::vector<int64_t> values(kIds);
    for (auto& v : values) v = id(rng);
    std::copy(values.begin(), values.end(), ids.MutableData<int64_t>());
    std::vector<int64_t> distinct = values;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const auto count = static_cast<int64_t>(distinct.size());
    eval::HostTensor unique = Tensor("output.0", core::DType::kInt64, {count});
    std::copy(distinct.begin(), distinct.end(), unique.MutableData<int64_t>());
    eval::HostTensor inverse = Tensor("output.1", core::DType::kInt64, {kIds});
    for (int64_t i = 0; i < kIds; ++i) {
      inverse.MutableData<int64_t>()[i] = std::lower_bound(distinct.begin(), distinct.end(), values[i]) - distinct.begin();
    }
    eval::HostTensor size = Tensor("output.0.size", core::DType::kInt64, {1});
    size.MutableData<int64_t>()[0] = count;
    const fs::path file = dir / ("seed_" + std::to_string(seed) + ".safetensors");
    eval::WriteSafetensors(file, {ids, unique, inverse, size}, {{"seed", std::to_string(seed)}});
    manifest.files.push_back(file);
    problem.fixture_files.push_back(file);
    manifest.set_shapes.push_back({{"input.0", {kIds}}, {"output.0", {count}}, {"output.1", {kIds}},
                                   {"output.0.size", {1}}});
  }
  manifest.inputs = {{"input.0", core::TensorRole::kInput, {kIds}, core::DType::kInt64}};
  manifest.outputs = {{"output.0", core::TensorRole::kOutput, {kIds}, core::DType::kInt64},
                      {"output.1", core::TensorRole::kOutput, {kIds}, core::DType::kInt64},
                      {"output.0.size", core::TensorRole::kOutput, {1}, core::DType::kInt64}};
  manifest.size_output = {2, -1, -1};
  problem.inputs = manifest.inputs;
  problem.outputs = manifest.outputs;
  std::ofstream(dir / "manifest.json") << eval::FixtureManifestToJson(manifest, dir).dump(2);
  return problem;
}

// The bag sum reading its sizes from the tensors; ROW(i) is the table row read for index i.
const char* kBagKernel = R"(
#include <dlpack/dlpack.h>
#include <cstdint>
extern "C" int kernelevolve_entry(const DLTensor* in, int32_t num_in, DLTensor* out, int32_t num_out) {
  if (num_in != 3 || num_out != 1) return 1;
  const int64_t* idx = static_cast<const int64_t*>(in[0].data);
  const int64_t* off = static_cast<const int64_t*>(in[1].data);
  const float* w = static_cast<const float*>(in[2].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t bags = in[1].shape[0] - 1, dim = in[2].shape[1];
  for (int64_t b = 0; b < bags; ++b) {
    for (int64_t d = 0; d < dim; ++d) y[b * dim + d] = 0;
    for (int64_t i = off[b]; i < off[b + 1]; ++i)
      for (int64_t d = 0; d < dim; ++d) y[b * dim + d] += w[ROW(i) * dim + d];
  }
  return 0;
}
)";

const char* kUniqueKernel = R"(
#include <dlpack/dlpack.h>
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <vector>
extern "C" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t num_out) {
  if (num_out != 3) return 1;
  const int64_t n = in[0].shape[0];
  const int64_t* ids = static_cast<const int64_t*>(in[0].data);
  std::vector<int64_t> distinct(ids, ids + n);
  std::sort(distinct.begin(), distinct.end());
  if (DEDUP) distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (static_cast<int64_t>(distinct.size()) > out[0].shape[0]) return 2;  // past the bound
  std::copy(distinct.begin(), distinct.end(), static_cast<int64_t*>(out[0].data));
  int64_t* inverse = static_cast<int64_t*>(out[1].data);
  for (int64_t i = 0; i < n; ++i)
    inverse[i] = std::lower_bound(distinct.begin(), distinct.end(), ids[i]) - distinct.begin();
  static_cast<int64_t*>(out[2].data)[0] = static_cast<int64_t>(distinct.size());
  return 0;
}
)";

std::string WithDefine(const std::string& name, const std::string& value, const std::string& source) {
  return "#define " + name + " " + value + "\n" + source;
}

class VaryingShapesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("ke-varying-shapes-test-" + std::to_string(getpid()));
    fs::create_directories(root_ / "bag");
    fs::create_directories(root_ / "unique");
    bag_ = std::make_unique<core::Problem>(WriteBagFixtures(root_ / "bag"));
    unique_ = std::make_unique<core::Problem>(WriteUniqueFixtures(root_ / "unique"));
    platform_ = std::make_unique<CpuPlatform>(root_ / "cache", KE_HARNESS_PATH);
  }
  static void TearDownTestSuite() {
    platform_.reset();
    fs::remove_all(root_);
  }

  static RunResult Run(const std::string& source, const core::Problem& problem, bool measure) {
    core::Candidate candidate;
    candidate.source = source;
    candidate.operator_name = "test";
    BuildResult build = platform_->Build(candidate);
    EXPECT_EQ(build.status, core::Status::kOk) << build.message << "\n" << build.log;
    RunOptions options;
    options.measure = measure;
    options.warmup_seconds = 0.001;
    options.min_time_seconds = 0.005;
    options.min_repetitions = 20;
    options.max_repetitions = 200;
    options.timeout_seconds = 20;
    options.memory_limit_bytes = 2LL << 30;
    options.threads = 1;
    return platform_->Run(build, problem, options);
  }

  static inline fs::path root_;
  static inline std::unique_ptr<core::Problem> bag_, unique_;
  static inline std::unique_ptr<CpuPlatform> platform_;
};

TEST_F(VaryingShapesTest, ManifestKeepsEachSetsShapes) {
  const auto manifest = eval::ReadFixtureManifest(bag_->fixtures_dir / "manifest.json");
  ASSERT_TRUE(manifest.ShapesVary());
  EXPECT_EQ(manifest.InputsOf(1)[0].shape, std::vector<int64_t>{kTotals[1]});
  EXPECT_EQ(manifest.InputsOf(0)[0].shape, std::vector<int64_t>{kTotals[0]});
  const auto unique = eval::ReadFixtureManifest(unique_->fixtures_dir / "manifest.json");
  EXPECT_EQ(unique.size_output, (std::vector<int>{2, -1, -1}));
  EXPECT_EQ(unique.OutputsOf(1)[0].shape, std::vector<int64_t>{kIds});  // bounded: allocated at the bound
}

TEST_F(VaryingShapesTest, KernelReadingSizesAtRunTimePassesEverySetAndIsTimed) {
  RunResult result = Run(WithDefine("ROW(i)", "idx[i]", kBagKernel), *bag_, /*measure=*/true);
  EXPECT_EQ(core::StatusName(result.status), "ok") << result.message << "\n" << result.log_excerpt;
  EXPECT_EQ(result.checks.size(), 3u);
  EXPECT_GT(result.latency.median_us, 0);
}

TEST_F(VaryingShapesTest, KernelUsingTheFirstSeedsSizesIsIncorrect) {
  // Reads the bag bounds as on seed 0 (N = 37) on every set: wrong on seed 1 (N = 5).
  std::string source = WithDefine("ROW(i)", "idx[i]", kBagKernel);
  source.replace(source.find("off[b + 1]"), 10, "(b + 1 == bags ? 37 : (b + 1) * 37 / (bags + 1))");
  source.replace(source.find("i = off[b]"), 10, "i = b * 37 / (bags + 1)");
  RunResult result = Run(source, *bag_, /*measure=*/false);
  EXPECT_NE(result.status, core::Status::kOk) << result.message;
  EXPECT_FALSE(result.correct);
}

TEST_F(VaryingShapesTest, ReadPastTheTableIsCaughtAndRecordedAsFailing) {
  // Off by one: row idx + 1 is one past the table for idx = kRows - 1 (index 0 of every
  // seed), which lies in the guard page after param.weight.
  RunResult result = Run(WithDefine("ROW(i)", "(idx[i] + 1)", kBagKernel), *bag_, /*measure=*/false);
  EXPECT_EQ(core::StatusName(result.status), "rejected_by_check") << result.message << "\n" << result.log_excerpt;
  EXPECT_NE(result.message.find("accessed memory outside param.weight: past its end"), std::string::npos)
      << result.message;
  EXPECT_FALSE(result.correct);
}

TEST_F(VaryingShapesTest, ReadFarPastTheValuesIsAFailingCandidateNotACrashOfTheTool) {
  // An unbounded index (idx * 2^20) lands far outside every buffer: the harness child
  // dies by the signal, and the platform reports a crash verdict (the caller goes on).
  RunResult result = Run(WithDefine("ROW(i)", "(idx[i] << 20)", kBagKernel), *bag_, /*measure=*/false);
  EXPECT_TRUE(result.status == core::Status::kCrash || result.status == core::Status::kRejectedByCheck)
      << core::StatusName(result.status) << ": " << result.message;
  EXPECT_FALSE(result.correct);
  RunResult after = Run(WithDefine("ROW(i)", "idx[i]", kBagKernel), *bag_, /*measure=*/false);
  EXPECT_EQ(core::StatusName(after.status), "ok") << after.message;
}

TEST_F(VaryingShapesTest, BoundedOutputIsComparedOnItsReportedPrefix) {
  RunResult result = Run(WithDefine("DEDUP", "true", kUniqueKernel), *unique_, /*measure=*/true);
  EXPECT_EQ(core::StatusName(result.status), "ok") << result.message << "\n" << result.log_excerpt;
  EXPECT_EQ(result.checks.size(), 9u);  // 3 outputs x 3 seeds
}

TEST_F(VaryingShapesTest, BoundedOutputWithAWrongSizeIsIncorrect) {
  RunResult result = Run(WithDefine("DEDUP", "false", kUniqueKernel), *unique_, /*measure=*/false);
  EXPECT_EQ(core::StatusName(result.status), "incorrect") << result.message;
  EXPECT_NE(result.message.find("shape mismatch"), std::string::npos) << result.message;
}

TEST(TrimBoundedOutputs, AWrongSizeTakesTheShapeTheKernelReported) {
  // output.0 bounded at [8] with its size tensor output.1; the reference has 2 elements.
  auto tensor = [](core::DType dtype, std::vector<int64_t> shape, std::vector<int64_t> values) {
    eval::HostTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.bytes.resize(static_cast<std::size_t>(t.NumElements()) * core::DTypeSize(dtype));
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (dtype == core::DType::kInt64) {
        std::memcpy(t.bytes.data() + k * 8, &values[k], 8);
      } else {
        const float v = static_cast<float>(values[k]);
        std::memcpy(t.bytes.data() + k * 4, &v, 4);
      }
    }
    return t;
  };
  eval::FixtureManifest manifest;
  manifest.size_output = {1, -1};
  SeedFixture fixture;
  fixture.references = {tensor(core::DType::kFloat32, {2}, {5, 7}), tensor(core::DType::kInt64, {1}, {2})};
  const eval::HostTensor buffer = tensor(core::DType::kFloat32, {8}, {5, 7, 9});
  // Right size: cut to the reference's shape.
  auto right = TrimBoundedOutputs(manifest, {buffer, tensor(core::DType::kInt64, {1}, {2})}, fixture);
  EXPECT_EQ(right[0].shape, (std::vector<int64_t>{2}));
  // Wrong size within the bound: the reported shape, so the mismatch names it.
  auto wrong = TrimBoundedOutputs(manifest, {buffer, tensor(core::DType::kInt64, {1}, {3})}, fixture);
  EXPECT_EQ(wrong[0].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(wrong[0].bytes.size(), 12u);
  // Past the bound or negative: the bound shape stays.
  for (const int64_t bad : {int64_t{-1}, int64_t{9}, int64_t{1} << 62}) {
    auto kept = TrimBoundedOutputs(manifest, {buffer, tensor(core::DType::kInt64, {1}, {bad})}, fixture);
    EXPECT_EQ(kept[0].shape, (std::vector<int64_t>{8})) << bad;
  }
}

}  // namespace
}  // namespace kernelevolve::platforms::cpu

// The CPU harness's pure parts: arguments, verdict JSON, outcome mapping, manifest.
#include "platforms/cpu/harness.h"
#include "relu_fixtures.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "eval/fixture_manifest.h"
#include "eval/safetensors.h"
#include "platforms/cpu/cpu_platform.h"
#include "platforms/cpu/harness_checks.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

TEST(HarnessArgsTest, ParsesEveryFlag) {
  HarnessOptions o = ParseHarnessArgs({"--kernel", "k.so", "--manifest", "m.json", "--warmup-seconds", "0.5",
                                       "--min-time-seconds", "2", "--min-reps", "7", "--max-reps", "9",
                                       "--no-measure", "--no-kernel-only"});
  EXPECT_EQ(o.kernel, "k.so");
  EXPECT_EQ(o.manifest, "m.json");
  EXPECT_EQ(o.warmup_seconds, 0.5);
  EXPECT_EQ(o.min_time_seconds, 2);
  EXPECT_EQ(o.min_repetitions, 7);
  EXPECT_EQ(o.max_repetitions, 9);
  EXPECT_FALSE(o.measure);
  EXPECT_FALSE(o.time_kernel_only);
  EXPECT_TRUE(ParseHarnessArgs({"--kernel", "k.so", "--manifest", "m.json"}).time_kernel_only);
}

TEST(HarnessArgsTest, RejectsBadArguments) {
  EXPECT_THROW(ParseHarnessArgs({"--kernel", "k.so"}), core::InvalidInputError);
  EXPECT_THROW(ParseHarnessArgs({"--kernel", "k.so", "--manifest", "m", "--bogus", "1"}), core::InvalidInputError);
  EXPECT_THROW(ParseHarnessArgs({"--kernel", "k.so", "--manifest", "m", "--min-reps", "x"}),
               core::InvalidInputError);
  EXPECT_THROW(ParseHarnessArgs({"--kernel"}), core::InvalidInputError);
}

TEST(HarnessVerdictTest, RoundTrips) {
  RunResult r;
  r.status = core::Status::kIncorrect;
  r.message = "output.0 differs";
  r.checks.push_back({1, "output.0", false, 0.5, 1.0, 3, 10, 1e-4, 1e-4, ""});
  r.latency.n = 4;
  r.latency.median_us = 2.5;
  RunResult back = HarnessVerdictFromJson(nlohmann::json::parse(HarnessVerdictToJson(r).dump()));
  EXPECT_EQ(back.status, core::Status::kIncorrect);
  EXPECT_EQ(back.message, r.message);
  ASSERT_EQ(back.checks.size(), 1u);
  EXPECT_EQ(back.checks[0].mismatches, 3);
  EXPECT_EQ(back.latency.median_us, 2.5);
  EXPECT_THROW(HarnessVerdictFromJson({{"status", "splendid"}}), core::InvalidInputError);
}

eval::SandboxResult Exited(int code, std::string out = "", std::string err = "") {
  eval::SandboxResult r;
  r.exit_code = code;
  r.stdout_text = std::move(out);
  r.stderr_text = std::move(err);
  return r;
}

TEST(HarnessOutcomeTest, MapsChildEndingsToStatuses) {
  std::string ok_line = HarnessVerdictToJson(RunResult{core::Status::kOk, "ok", "", true, {}, {}, {}, 0}).dump();
  EXPECT_EQ(InterpretHarnessOutcome(Exited(0, "noise\n" + ok_line + "\n"), 5).status, core::Status::kOk);

  auto timed_out = Exited(-1);
  timed_out.timed_out = true;
  timed_out.signal = SIGKILL;
  EXPECT_EQ(InterpretHarnessOutcome(timed_out, 5).status, core::Status::kTimeout);

  auto xcpu = Exited(-1);
  xcpu.signal = SIGXCPU;
  EXPECT_EQ(InterpretHarnessOutcome(xcpu, 5).status, core::Status::kTimeout);

  EXPECT_EQ(InterpretHarnessOutcome(Exited(3, "", "out of memory\n"), 5).status, core::Status::kOutOfMemory);
  auto abort_bad_alloc = Exited(-1, "", "terminate called after throwing an instance of 'std::bad_alloc'\n");
  abort_bad_alloc.signal = SIGABRT;
  EXPECT_EQ(InterpretHarnessOutcome(abort_bad_alloc, 5).status, core::Status::kOutOfMemory);

  auto segv = Exited(-1, "", "boom");
  segv.signal = SIGSEGV;
  RunResult crash = InterpretHarnessOutcome(segv, 5);
  EXPECT_EQ(crash.status, core::Status::kCrash);
  EXPECT_EQ(crash.message, "killed by SIGSEGV");
  EXPECT_EQ(crash.log_excerpt, "boom");

  RunResult lost = InterpretHarnessOutcome(Exited(2, "", "kernelevolve-cpu-harness: bad manifest\n"), 5);
  EXPECT_EQ(lost.status, core::Status::kWorkerLost);
  EXPECT_NE(lost.message.find("bad manifest"), std::string::npos);
}

TEST(HarnessOutcomeTest, LogExcerptIsTheStderrTail) {
  std::string err(10000, 'a');
  err += "THE END";
  RunResult r = InterpretHarnessOutcome(Exited(1, "", err), 5);
  EXPECT_LE(r.log_excerpt.size(), 4096u);
  EXPECT_TRUE(r.log_excerpt.ends_with("THE END"));
}

TEST(FixtureManifestTest, ReadsWhatItWritesAndNamesBadFields) {
  fs::path dir = fs::temp_directory_path() / ("ke-manifest-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  eval::FixtureManifest m;
  m.problem = "linear";
  m.inputs = {{"input.0", core::TensorRole::kInput, {4, 3}, core::DType::kFloat32},
              {"param.weight", core::TensorRole::kParameter, {2, 3}, core::DType::kFloat32}};
  m.outputs = {{"output.0", core::TensorRole::kOutput, {4, 2}, core::DType::kFloat32}};
  m.seeds = {5};
  m.files = {dir / "seed_5.safetensors"};
  m.tolerance_overrides[core::DType::kFloat32] = {1e-3, 2e-3};
  m.edge_cases = {{"large",
                   "float inputs scaled by 10000",
                   dir / "edge_large.safetensors",
                   {{"output.0", 640.0}},
                   {"output.0"}}};
  m.edge_skipped = {{"zeros", "'x' reaches 0 below its INPUT_DOMAIN [1, 2]"}};
  m.eager_error_multiple = 4;
  nlohmann::json doc = eval::FixtureManifestToJson(m, dir);
  EXPECT_EQ(doc["files"][0], "seed_5.safetensors");
  EXPECT_EQ(doc["edge_cases"][0]["file"], "edge_large.safetensors");
  EXPECT_EQ(doc["edge_cases"][0]["allowance"], nlohmann::json::array({"output.0"}));
  std::ofstream(dir / "manifest.json") << doc.dump();
  eval::FixtureManifest back = eval::ReadFixtureManifest(dir / "manifest.json");
  EXPECT_EQ(back.inputs.size(), 2u);
  EXPECT_EQ(back.inputs[1].role, core::TensorRole::kParameter);
  EXPECT_EQ(back.files[0], dir / "seed_5.safetensors");
  EXPECT_EQ(back.ToleranceFor(core::DType::kFloat32).rtol, 2e-3);
  EXPECT_EQ(back.ToleranceFor(core::DType::kFloat64).atol, 1e-7);
  ASSERT_EQ(back.edge_cases.size(), 1u);
  EXPECT_EQ(back.edge_cases[0].name, "large");
  EXPECT_EQ(back.edge_cases[0].description, "float inputs scaled by 10000");
  EXPECT_EQ(back.edge_cases[0].file, dir / "edge_large.safetensors");
  EXPECT_EQ(back.edge_cases[0].ReferenceError("output.0"), 640.0);
  EXPECT_EQ(back.edge_cases[0].ReferenceError("output.1"), 0.0);
  EXPECT_EQ(back.edge_cases[0].allowance, std::vector<std::string>{"output.0"});
  EXPECT_TRUE(back.edge_cases[0].HasAllowance("output.0"));
  EXPECT_FALSE(back.edge_cases[0].HasAllowance("output.1"));
  EXPECT_EQ(eval::AllowanceTensorName("output.0"), "allowance.output.0");
  EXPECT_EQ(back.eager_error_multiple, 4);  // EAGER_ERROR_MULTIPLE = 4
  nlohmann::json old_doc = doc;  // a manifest from before allowances and the written multiple
  old_doc["edge_cases"][0].erase("allowance");
  old_doc.erase("eager_error_multiple");
  std::ofstream(dir / "old.json") << old_doc.dump();
  const eval::FixtureManifest old = eval::ReadFixtureManifest(dir / "old.json");
  EXPECT_TRUE(old.edge_cases[0].allowance.empty());
  EXPECT_EQ(old.eager_error_multiple, 0);  // absent: off
  ASSERT_EQ(back.edge_skipped.size(), 1u);
  EXPECT_EQ(back.edge_skipped[0].first, "zeros");

  doc["inputs"][0]["role"] = "weight";
  std::ofstream(dir / "bad.json") << doc.dump();
  try {
    eval::ReadFixtureManifest(dir / "bad.json");
    ADD_FAILURE() << "expected InvalidInputError";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown role 'weight'"), std::string::npos) << e.what();
  }
  doc["inputs"][0]["role"] = "input";
  doc["edge_cases"][0]["reference_error"]["output.0"] = -1.0;
  std::ofstream(dir / "bad_error.json") << doc.dump();
  try {
    eval::ReadFixtureManifest(dir / "bad_error.json");
    ADD_FAILURE() << "expected InvalidInputError";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("edge case 'large': reference_error.output.0 must be a finite number >= 0"),
              std::string::npos)
        << e.what();
  }
  doc["edge_cases"][0]["reference_error"]["output.0"] = 640.0;
  const std::vector<std::pair<nlohmann::json, std::string>> bad_allowances = {
      {nlohmann::json::array({"output.9"}),
       "edge case 'large': allowance names 'output.9', which is not an output"},
      {nlohmann::json::array({3}), "edge case 'large': allowance entry 3 must be an output name"},
      {nlohmann::json::array({"output.0", "output.0"}),
       "edge case 'large': allowance lists 'output.0' twice"},
      {"output.0", "edge case 'large': allowance must be a list of output names"}};
  for (const auto& [value, expected] : bad_allowances) {
    doc["edge_cases"][0]["allowance"] = value;
    std::ofstream(dir / "bad_allowance.json") << doc.dump();
    try {
      eval::ReadFixtureManifest(dir / "bad_allowance.json");
      ADD_FAILURE() << "expected InvalidInputError for allowance " << value.dump();
    } catch (const core::InvalidInputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST(FixtureManifestTest, EdgeCaseFixturesCarryTheListedAllowancesAndNameBadOnes) {
  const fs::path dir =
      fs::temp_directory_path() / ("ke-allowance-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  kernelevolve::testing_util::WriteReluFixtures(dir, 10.0, 8.0, 10.0f);
  eval::FixtureManifest m = eval::ReadFixtureManifest(dir / "manifest.json");
  ASSERT_EQ(m.edge_cases.size(), 2u);  // "large" (with an allowance), "zeros"
  std::vector<SeedFixture> edges = LoadEdgeCaseFixtures(m);
  ASSERT_EQ(edges[0].allowances.size(), 1u);
  ASSERT_TRUE(edges[0].allowances[0].has_value());
  EXPECT_EQ(edges[0].allowances[0]->shape, (std::vector<int64_t>{8, 1000}));
  EXPECT_EQ(edges[0].allowances[0]->dtype, core::DType::kFloat32);
  ASSERT_EQ(edges[1].allowances.size(), 1u);
  EXPECT_FALSE(edges[1].allowances[0].has_value());
  const std::vector<SeedFixture> seeds = LoadSeedFixtures(m);
  ASSERT_EQ(seeds[0].allowances.size(), 1u);  // the manifest lists no seed allowance
  EXPECT_FALSE(seeds[0].allowances[0].has_value());

  auto expect_error = [&](const eval::FixtureManifest& manifest, const std::string& expected) {
    try {
      LoadEdgeCaseFixtures(manifest);
      ADD_FAILURE() << "expected InvalidInputError: " << expected;
    } catch (const core::InvalidInputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  eval::FixtureManifest missing = m;
  missing.edge_cases[1].allowance = {"output.0"};  // edge_zeros.safetensors has none
  expect_error(missing, (dir / "edge_zeros.safetensors").string() +
                            ": tensor 'allowance.output.0' (edge case 'zeros'): missing, though "
                            "the manifest lists an "
                            "allowance for output.0");

  const fs::path large = m.edge_cases[0].file;
  auto rewrite_allowance = [&](eval::HostTensor allowance) {
    const eval::SafetensorsFile file = eval::ReadSafetensors(large);
    std::vector<eval::HostTensor> tensors = {file.Get("input.0"), file.Get("output.0"),
                                             std::move(allowance)};
    eval::WriteSafetensors(large, tensors);
  };
  eval::HostTensor flat = *edges[0].allowances[0];
  flat.shape = {8000};
  rewrite_allowance(flat);
  expect_error(m, large.string() +
                      ": tensor 'allowance.output.0' (edge case 'large'): must be float32 of "
                      "output.0's shape [8, 1000], got float32 [8000]");
  eval::HostTensor negative = *edges[0].allowances[0];
  negative.MutableData<float>()[5] = -1.0f;
  rewrite_allowance(negative);
  expect_error(m, "element 5 is -1; every element must be finite and >= 0");
  fs::remove_all(dir);
}

TEST(FixtureManifestTest, SeedFilesCarryTheAllowancesTheirSeedAllowanceEntryLists) {
  const fs::path dir =
      fs::temp_directory_path() / ("ke-seed-allowance-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  kernelevolve::testing_util::WriteReluFixtures(dir, 10.0, 8.0, 10.0f);
  eval::FixtureManifest m = eval::ReadFixtureManifest(dir / "manifest.json");
  ASSERT_EQ(m.files.size(), 3u);
  // Seed 0's file gets an allowance tensor, and its manifest entry says so.
  const eval::SafetensorsFile file = eval::ReadSafetensors(m.files[0]);
  eval::HostTensor scale = *LoadEdgeCaseFixtures(m)[0].allowances[0];
  std::vector<eval::HostTensor> tensors = file.tensors;
  tensors.push_back(scale);
  eval::WriteSafetensors(m.files[0], tensors);
  m.seed_allowance = {{"output.0"}, {}, {}};
  nlohmann::json doc = eval::FixtureManifestToJson(m, dir);
  EXPECT_EQ(doc["seed_allowance"], nlohmann::json::parse(R"([["output.0"], [], []])"));
  std::ofstream(dir / "with_seed.json") << doc.dump();
  const eval::FixtureManifest back = eval::ReadFixtureManifest(dir / "with_seed.json");
  EXPECT_TRUE(back.SeedHasAllowance(0, "output.0"));
  EXPECT_FALSE(back.SeedHasAllowance(1, "output.0"));
  EXPECT_FALSE(back.SeedHasAllowance(7, "output.0"));  // no such file: none
  const std::vector<SeedFixture> seeds = LoadSeedFixtures(back);
  ASSERT_TRUE(seeds[0].allowances[0].has_value());
  EXPECT_EQ(seeds[0].allowances[0]->bytes, scale.bytes);
  EXPECT_FALSE(seeds[1].allowances[0].has_value());

  auto expect_error = [&](const nlohmann::json& value, const std::string& expected) {
    nlohmann::json bad = doc;
    bad["seed_allowance"] = value;
    std::ofstream(dir / "bad_seed.json") << bad.dump();
    try {
      LoadSeedFixtures(eval::ReadFixtureManifest(dir / "bad_seed.json"));
      ADD_FAILURE() << "expected InvalidInputError for seed_allowance " << value.dump();
    } catch (const core::InvalidInputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  expect_error(nlohmann::json::parse(R"([["output.0"], []])"), "'seed_allowance' has 2 entries but 'files' has 3");
  expect_error(nlohmann::json::parse(R"([["output.3"], [], []])"),
               "seed_allowance[0]: allowance names 'output.3', which is not an output");
  expect_error("output.0", "seed_allowance must be a list (one per file)");
  tensors.pop_back();  // the file loses its tensor while the manifest still lists it
  eval::WriteSafetensors(m.files[0], tensors);
  expect_error(doc["seed_allowance"], ": tensor 'allowance.output.0' (seed 0): missing");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve::platforms::cpu

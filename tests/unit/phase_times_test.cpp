// core::PhaseTimes: the per-phase wall seconds behind result.json's phase_seconds.
#include "core/phase_times.h"

#include <cmath>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

namespace kernelevolve::core {
namespace {

TEST(PhaseTimes, AccumulatesInFirstSeenOrderAndIgnoresBadValues) {
  PhaseTimes t;
  t.Add("load", 2.0);
  t.Add("search", 5.0);
  t.Add("load", 0.5);
  t.Add("search", -1.0);
  t.Add("search", std::numeric_limits<double>::quiet_NaN());
  t.Add("confirmation", std::numeric_limits<double>::infinity());
  const nlohmann::json j = t.ToJson();
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j.begin().key(), "load");
  EXPECT_DOUBLE_EQ(j["load"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(j["search"].get<double>(), 5.0);
}

TEST(PhaseTimes, WorkerPartsAreNamedUnderTheirParentAndJunkIsSkipped) {
  PhaseTimes t;
  t.Add("load", 3.0);
  t.AddParts("load", nlohmann::json{{"import", 0.25}, {"capture", 1.0}, {"note", "text"}});
  t.AddParts("gpu_prepare", nlohmann::json::array({1, 2}));  // not an object: an older worker
  t.AddParts("gpu_prepare", nlohmann::json());
  PhaseTimes all;
  all.Add("worker_start", 0.1);
  all.AddAll(t);
  const nlohmann::json j = all.ToJson();
  EXPECT_EQ(j.size(), 4u);
  EXPECT_DOUBLE_EQ(j["load.import"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["load.capture"].get<double>(), 1.0);
  EXPECT_FALSE(j.contains("load.note"));
  EXPECT_FALSE(j.contains("gpu_prepare.0"));
}

TEST(PhaseTimes, ScopedPhaseAddsTheWallTimeOfItsScope) {
  PhaseTimes t;
  {
    ScopedPhase phase(t, "search");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(t.Entries().size(), 1u);
  EXPECT_GE(t.Entries()[0].second, 0.019);
  EXPECT_LT(t.Entries()[0].second, 5.0);
}

}  // namespace
}  // namespace kernelevolve::core

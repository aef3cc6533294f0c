#include "operators/template/knob_space.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"

namespace kernelevolve::operators::templates {
namespace {

using nlohmann::json;

TEST(KnobSpace, CanonicalFillsDefaultsAndDropsKnobsThatDoNotMatter) {
  const KnobSpace space = PointwiseKnobSpace(true);
  EXPECT_EQ(space.Canonical({{"simd", "on"}, {"threads", "1"}, {"block", 4096}}),
            json({{"simd", "on"}, {"threads", "1"}, {"unroll", 1}}));
  EXPECT_EQ(space.Canonical({{"threads", "all"}}),
            json({{"simd", "off"}, {"threads", "all"}, {"block", 16384}, {"unroll", 1}}));
}

TEST(KnobSpace, RejectsUnknownKnobsAndValuesWithTheirNames) {
  const KnobSpace space = PointwiseKnobSpace(true);
  try {
    space.Canonical({{"unroll", 3}});
    FAIL() << "expected InvalidInputError";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("'unroll' = 3 is not allowed; use one of [1,2,4]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(space.Canonical({{"tile", 8}}), core::InvalidInputError);
  EXPECT_THROW(space.Canonical(json::array()), core::InvalidInputError);
  EXPECT_FALSE(PointwiseKnobSpace(false).IsValid({{"threads", "all"}}));
  EXPECT_TRUE(space.IsValid({{"threads", "all"}}));
}

TEST(KnobSpace, EnumeratesEveryCanonicalSettingOnce) {
  for (bool multithread : {true, false}) {
    for (const KnobSpace& space :
         {PointwiseKnobSpace(multithread), SoftmaxKnobSpace(multithread)}) {
      const auto all = space.Enumerate();
      EXPECT_EQ(all.size(), multithread ? 24u : 6u);
      std::set<std::string> unique;
      for (const auto& k : all) {
        EXPECT_EQ(space.Canonical(k), k);
        unique.insert(k.dump());
      }
      EXPECT_EQ(unique.size(), all.size());
    }
  }
}

TEST(KnobSpace, NeighboursChangeOneKnobAndRefillDependents) {
  const KnobSpace space = PointwiseKnobSpace(true);
  const json base = {{"simd", "off"}, {"threads", "1"}, {"unroll", 1}};
  const auto moves = space.Neighbours(base);
  ASSERT_EQ(moves.size(), 4u);  // simd, threads, unroll x2
  EXPECT_EQ(moves[0].dim, "simd");
  EXPECT_EQ(moves[1].knobs,
            json({{"simd", "off"}, {"threads", "all"}, {"block", 16384}, {"unroll", 1}}));
  for (const auto& m : moves) EXPECT_EQ(space.Distance(base, m.knobs), m.dim == "threads" ? 2 : 1);

  const json threaded = space.Canonical({{"threads", "all"}, {"block", 4096}});
  const auto more = space.Neighbours(threaded);
  EXPECT_EQ(more.size(), 6u);  // simd, threads -> 1, block x2, unroll x2
  for (const auto& m : more) {
    if (m.dim == "threads") EXPECT_FALSE(m.knobs.contains("block"));
  }
}

TEST(KnobSpace, DescribesSettingsWithPhrases) {
  const KnobSpace space = PointwiseKnobSpace(true);
  EXPECT_EQ(space.Phrase("unroll", 4), "4x unroll");
  EXPECT_EQ(space.Phrase("block", 65536), "65536-element blocks");
  EXPECT_EQ(space.Describe(space.Canonical({{"simd", "on"}, {"threads", "all"}})),
            "omp simd on, threads=all, 16384-element blocks, 1x unroll");
}

TEST(KnobSpace, InconsistentDescriptionIsAnInternalError) {
  EXPECT_THROW(KnobSpace({{"a", {1, 2}, 3, nullptr, nullptr, "", nullptr, "{}"}}),
               core::InternalError);
  EXPECT_THROW(KnobSpace({{"a", {1}, 1, nullptr, nullptr, "later", 1, "{}"},
                          {"later", {1}, 1, nullptr, nullptr, "", nullptr, "{}"}}),
               core::InternalError);
}

}  // namespace
}  // namespace kernelevolve::operators::templates

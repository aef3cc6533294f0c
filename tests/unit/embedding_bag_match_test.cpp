// ir::MatchEmbeddingBag on hand-built captured graphs: the dtypes its kernels take
// (float32 weights and per-sample weights, int64 indices and offsets) and the ones it
// leaves to the other families, which name the op when they cannot lower it.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/problem.h"
#include "operators/ir/embedding_bag.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve {
namespace {

nlohmann::json Placeholder(const std::string& name, int abi_index, nlohmann::json shape, const std::string& dtype) {
  return {{"name", name}, {"kind", "placeholder"}, {"abi_index", abi_index}, {"shape", shape}, {"dtype", dtype}};
}

/// F.embedding_bag(indices, weight, offsets, mode="sum") as torch 2.11 captures it, with
/// the given dtypes of indices, weight and offsets.
core::OpGraph BagGraph(const std::string& indices, const std::string& weight, const std::string& offsets) {
  nlohmann::json g;
  g["nodes"] = {
      Placeholder("indices", 0, {12}, indices),
      Placeholder("weight", 1, {10, 4}, weight),
      Placeholder("offsets", 2, {3}, offsets),
      {{"name", "bag"}, {"kind", "call"}, {"target", "aten._embedding_bag.default"},
       {"args",
        {{{"name", "weight"}, {"ref", "weight"}},
         {{"name", "indices"}, {"ref", "indices"}},
         {{"name", "offsets"}, {"ref", "offsets"}},
         {{"name", "mode"}, {"value", 0}},
         {{"name", "include_last_offset"}, {"value", false}}}},
       {"shape", {3, 4}},
       {"dtype", weight},
       {"output_shapes", {{3, 4}, {0}, {3}, {3}}},
       {"output_dtypes", {weight, "int64", "int64", "int64"}}},
      {{"name", "getitem"}, {"kind", "call"}, {"target", "getitem"},
       {"args", {{{"name", "self"}, {"ref", "bag"}}, {{"name", "index"}, {"value", 0}}}},
       {"shape", {3, 4}},
       {"dtype", weight}},
  };
  g["outputs"] = {"getitem"};
  return core::OpGraphFromJson(g);
}

TEST(EmbeddingBagMatch, TakesFloat32TablesWithInt64IndicesAndOffsets) {
  const auto spec = operators::ir::MatchEmbeddingBag(BagGraph("int64", "float32", "int64"));
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->indices, 0);
  EXPECT_EQ(spec->weight, 1);
  EXPECT_EQ(spec->offsets, 2);
  EXPECT_EQ(spec->mode, operators::ir::EmbeddingBagSpec::Mode::kSum);
  EXPECT_EQ(spec->num_inputs, 3);
}

TEST(EmbeddingBagMatch, TakesHalfPrecisionTablesWhoseOutputIsOfTheSameDtype) {
  for (const char* dtype : {"float16", "bfloat16"}) {
    const auto spec = operators::ir::MatchEmbeddingBag(BagGraph("int64", dtype, "int64"));
    ASSERT_TRUE(spec.has_value()) << dtype;
    EXPECT_EQ(spec->dtype, core::DTypeFromName(dtype));
  }
  // A float16 table with a float32 output (not a graph torch records, but a hand-made
  // one may say so) is refused: the kernel stores the table's dtype.
  core::OpGraph mixed = BagGraph("int64", "float16", "int64");
  mixed.nodes.back().dtype = core::DType::kFloat32;
  std::string why;
  EXPECT_FALSE(operators::ir::MatchEmbeddingBag(mixed, &why).has_value());
  EXPECT_NE(why.find("output of the same dtype"), std::string::npos) << why;
}

TEST(EmbeddingBagMatch, LeavesOtherDtypesToTheOtherFamilies) {
  // Before, int32 indices matched and every candidate failed its dtype check at run time.
  EXPECT_FALSE(operators::ir::MatchEmbeddingBag(BagGraph("int32", "float32", "int32")).has_value());
  EXPECT_FALSE(operators::ir::MatchEmbeddingBag(BagGraph("int64", "float64", "int64")).has_value());
  EXPECT_FALSE(operators::ir::MatchEmbeddingBag(BagGraph("int64", "float32", "int32")).has_value());
}

TEST(EmbeddingBagMatch, ARefusedLookupSaysWhy) {
  // int32 indices and a padding_idx: refused with the reason, which the answer of the
  // template operator then carries after the loop nest's "unsupported_op".
  std::string why;
  EXPECT_FALSE(operators::ir::MatchEmbeddingBag(BagGraph("int32", "float32", "int32"), &why).has_value());
  EXPECT_NE(why.find("int64 indices and offsets"), std::string::npos) << why;
  core::OpGraph graph = BagGraph("int64", "float32", "int64");
  for (core::OpNode& n : graph.nodes) {
    if (n.target == "aten._embedding_bag.default") {
      core::OpArg arg;
      arg.name = "padding_idx";
      arg.value = 2;
      n.args.push_back(arg);
    }
  }
  why.clear();
  EXPECT_FALSE(operators::ir::MatchEmbeddingBag(graph, &why).has_value());
  EXPECT_EQ(why, "padding_idx is not supported");
  core::Problem problem;
  problem.graph = graph;
  const auto match = operators::templates::MatchTemplate(problem, /*threads=*/1, /*vector_lanes=*/8);
  ASSERT_EQ(match.tmpl, nullptr);
  EXPECT_NE(match.unsupported.find("aten._embedding_bag"), std::string::npos) << match.unsupported;
  EXPECT_NE(match.unsupported.find("(the embedding_bag family does not take it: padding_idx is not supported)"),
            std::string::npos)
      << match.unsupported;
  // A graph without a lookup gets no reason.
  why.clear();
  core::OpGraph empty;
  EXPECT_FALSE(operators::ir::MatchEmbeddingBag(empty, &why).has_value());
  EXPECT_TRUE(why.empty());
}

}  // namespace
}  // namespace kernelevolve

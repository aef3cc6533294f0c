// Shared helpers for the knowledge base unit tests (knowledge_*_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/problem.h"
#include "search/node.h"

namespace kernelevolve::knowledge::testing {

/// One fresh temporary folder per test, removed afterwards.
class KnowledgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "ke_kb_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_path_ = dir_ / "kb" / "knowledge.db";
    corpus_ = dir_ / "corpus";
    std::filesystem::create_directories(corpus_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// Writes `text` to corpus_/rel (creating folders).
  void WriteDoc(const std::string& rel, const std::string& text) {
    const auto path = corpus_ / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  std::filesystem::path dir_;
  std::filesystem::path db_path_;
  std::filesystem::path corpus_;
};

/// A markdown document with front matter.
inline std::string Doc(const std::string& title, const std::string& platforms,
                       const std::string& phases, const std::string& bottlenecks,
                       const std::string& body) {
  return "---\ntitle: " + title + "\nplatforms: [" + platforms + "]\nphases: [" + phases +
         "]\nbottlenecks: [" + bottlenecks + "]\ntags: []\n---\n# " + title + "\n\n" + body + "\n";
}

/// A softmax-like problem: one aten._softmax call over a [rows, cols] float32 input.
inline core::Problem SoftmaxProblem(int64_t rows, int64_t cols, const std::string& target = "aten._softmax.default") {
  core::Problem p;
  p.name = "softmax";
  p.source_path = "problems/level1/softmax.py";
  p.inputs = {{"input.0", core::TensorRole::kInput, {rows, cols}, core::DType::kFloat32}};
  p.outputs = {{"output.0", core::TensorRole::kOutput, {rows, cols}, core::DType::kFloat32}};
  core::OpNode x;
  x.name = "arg0_1";
  x.kind = core::OpNodeKind::kPlaceholder;
  x.shape = {rows, cols};
  x.abi_index = 0;
  core::OpNode call;
  call.name = "softmax";
  call.kind = core::OpNodeKind::kCall;
  call.target = target;
  call.args = {{"self", "arg0_1", nullptr}, {"dim", "", -1}, {"half_to_float", "", false}};
  call.shape = {rows, cols};
  p.graph.nodes = {x, call};
  p.graph.outputs = {"softmax"};
  p.eager_baseline.n = 10;
  p.eager_baseline.median_us = 100;
  return p;
}

/// A node with the given id, parent, knobs and fitness (correct when fitness > 0).
inline search::Node MakeNode(int64_t id, int64_t parent, const nlohmann::json& knobs, double fitness,
                             const std::string& source) {
  search::Node n;
  n.id = id;
  n.parent_id = parent;
  n.candidate.source = source;
  n.candidate.operator_name = "template";
  n.candidate.template_name = "softmax_lastdim";
  n.candidate.knobs = knobs;
  n.candidate.rationale = "test";
  n.evaluation.status = fitness > 0 ? core::Status::kOk : core::Status::kCompileError;
  n.evaluation.correct = fitness > 0;
  n.evaluation.fitness = fitness;
  n.evaluation.speedup_vs_eager.value = fitness;
  n.evaluation.latency.n = 10;
  n.evaluation.latency.median_us = fitness > 0 ? 100.0 / fitness : 0;
  return n;
}

}  // namespace kernelevolve::knowledge::testing

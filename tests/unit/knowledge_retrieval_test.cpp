// Retrieval over the built-in corpus (knowledge/): the right pages for typical
// diagnoses, filters and budgets honoured, every result explained.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "core/error.h"
#include "knowledge/knowledge_base.h"
#include "knowledge_test_util.h"

namespace kernelevolve::knowledge {
namespace {

namespace fs = std::filesystem;

class KnowledgeRetrievalTest : public testing::KnowledgeTest {
 protected:
  void SetUp() override {
    KnowledgeTest::SetUp();
    kb_ = std::make_unique<KnowledgeBase>(
        KnowledgeBase::Open(db_path_, {fs::path(KE_SOURCE_DIR) / "knowledge"}));
  }
  std::vector<std::string> Documents(const std::vector<Passage>& passages) {
    std::vector<std::string> out;
    for (const auto& p : passages) out.push_back(p.document);
    return out;
  }
  std::unique_ptr<KnowledgeBase> kb_;
};

TEST_F(KnowledgeRetrievalTest, CorpusHasAtLeastThirtyDocumentsWithPassages) {
  const auto docs = kb_->Documents();
  EXPECT_GE(docs.size(), 30u);
  EXPECT_TRUE(kb_->LastReindex().warnings.empty()) << kb_->LastReindex().warnings.front();
  for (const auto& d : docs) {
    EXPECT_GT(d.passages, 0) << d.document;
    EXPECT_FALSE(d.title.empty()) << d.document;
    EXPECT_NE(d.document, "index.md");
  }
  for (const char* folder : {"constraints/", "guidance/", "hardware/cpu-x86/", "hardware/nvidia-hopper/",
                             "hardware/amd-cdna/", "hardware/mtia/"}) {
    EXPECT_TRUE(std::any_of(docs.begin(), docs.end(),
                            [&](const DocumentInfo& d) { return d.document.rfind(folder, 0) == 0; }))
        << folder;
  }
}

TEST_F(KnowledgeRetrievalTest, MemoryBoundCpuDiagnosisReturnsTheX86BandwidthPage) {
  RetrievalQuery q;
  q.text = "softmax kernel reaches only 30% of the machine's memory bandwidth; memory-bound on the "
           "CPU, why does it not saturate DRAM?";
  q.platform = "cpu";
  q.phase = "optimize";
  q.bottleneck = "memory_bound";
  q.k = 5;
  const auto passages = kb_->Retrieve(q);
  ASSERT_FALSE(passages.empty());
  const auto docs = Documents(passages);
  auto it = std::find(docs.begin(), docs.end(), "hardware/cpu-x86/memory-bandwidth.md");
  ASSERT_NE(it, docs.end()) << ::testing::PrintToString(docs);
  EXPECT_LT(it - docs.begin(), 2) << ::testing::PrintToString(docs);
  for (const auto& d : docs) {
    EXPECT_EQ(d.find("nvidia-hopper"), std::string::npos) << d;  // platform filter
    EXPECT_EQ(d.find("amd-cdna"), std::string::npos) << d;
  }
}

TEST_F(KnowledgeRetrievalTest, CompileErrorRepairQueryReturnsTheCompileErrorDebuggingPage) {
  RetrievalQuery q;
  q.text = "candidate.cpp:42:17: error: '_mm512_loadu_ps' was not declared in this scope; the "
           "build failed";
  q.platform = "cpu";
  q.phase = "repair";
  q.bottleneck = "compile_error";
  const auto passages = kb_->Retrieve(q);
  ASSERT_FALSE(passages.empty());
  EXPECT_EQ(passages.front().document, "guidance/debugging-compile-errors.md")
      << ::testing::PrintToString(Documents(passages));
}

TEST_F(KnowledgeRetrievalTest, EveryResultSaysWhyItWasChosen) {
  RetrievalQuery q{"online softmax exp overflow", "cpu", "optimize", "", 4, 2000};
  const auto passages = kb_->Retrieve(q);
  ASSERT_FALSE(passages.empty());
  for (const auto& p : passages) {
    EXPECT_GT(p.bm25, 0) << p.document;
    EXPECT_GE(p.boost, 1.0);
    EXPECT_DOUBLE_EQ(p.score, p.bm25 * p.boost);
    EXPECT_FALSE(p.matched_terms.empty()) << p.document;
    ASSERT_FALSE(p.matched_filters.empty()) << p.document;
    EXPECT_EQ(p.matched_filters.front().rfind("platform=cpu", 0), 0u) << p.matched_filters.front();
    EXPECT_NE(p.Why().find("bm25"), std::string::npos);
    EXPECT_NE(p.Why().find("terms:"), std::string::npos);
  }
  EXPECT_EQ(passages.front().document, "guidance/online-softmax.md");
}

TEST_F(KnowledgeRetrievalTest, TokenBudgetAndPerDocumentCapAreHonoured) {
  RetrievalQuery q{"bandwidth cache memory threads vectorization", "cpu", "", "", 10, 400, 1};
  const auto passages = kb_->Retrieve(q);
  ASSERT_FALSE(passages.empty());
  int tokens = 0;
  std::set<std::string> docs;
  for (const auto& p : passages) {
    tokens += p.tokens;
    EXPECT_TRUE(docs.insert(p.document).second) << "two passages from " << p.document;
  }
  EXPECT_LE(tokens, 400);
}

TEST_F(KnowledgeRetrievalTest, CitationsAreNotRetrieved) {
  RetrievalQuery q{"Williams Waterman Patterson Communications ACM arXiv", "", "", "", 10, 5000};
  for (const auto& p : kb_->Retrieve(q)) {
    EXPECT_NE(p.heading, "Sources") << p.document;
  }
}

TEST_F(KnowledgeRetrievalTest, PlatformFilterKeepsGpuPagesForCudaQueries) {
  RetrievalQuery q{"HBM bandwidth of the H200", "cuda", "", "memory_bound", 3, 2000};
  const auto passages = kb_->Retrieve(q);
  ASSERT_FALSE(passages.empty());
  EXPECT_EQ(passages.front().document, "hardware/nvidia-hopper/hbm-bandwidth.md");
  for (const auto& p : passages) EXPECT_EQ(p.document.find("cpu-x86"), std::string::npos);
}

TEST_F(KnowledgeRetrievalTest, UnknownFacetValuesAreInputErrors) {
  EXPECT_THROW(kb_->Retrieve(RetrievalQuery{"x", "tpu"}), core::InvalidInputError);
  EXPECT_THROW(kb_->Retrieve(RetrievalQuery{"x", "cpu", "polish"}), core::InvalidInputError);
  EXPECT_THROW(kb_->Retrieve(RetrievalQuery{"x", "cpu", "", "slow"}), core::InvalidInputError);
  try {
    kb_->Retrieve(RetrievalQuery{"x", "tpu"});
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu, cuda, triton, any"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kernelevolve::knowledge

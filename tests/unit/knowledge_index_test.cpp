// Indexing a corpus: only changed files are re-indexed, deleted ones dropped, the index
// survives reopening; user documents; front matter and section splitting.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/error.h"
#include "knowledge/front_matter.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/markdown_sections.h"
#include "knowledge_test_util.h"

namespace kernelevolve::knowledge {
namespace {

namespace fs = std::filesystem;
using testing::Doc;

class KnowledgeIndexTest : public testing::KnowledgeTest {
 protected:
  void WriteThree() {
    WriteDoc("a.md", Doc("Alpha", "cpu", "optimize", "memory_bound", "Stream triad bandwidth.\n\n## Two\n\nPrefetch."));
    WriteDoc("sub/b.md", Doc("Beta", "cuda", "repair", "compile_error", "nvcc host device error."));
    WriteDoc("sub/c.md", Doc("Gamma", "any", "", "", "Fusion of elementwise chains."));
    WriteDoc("index.md", "# Table of contents\n\nNot indexed.\n");
  }
  KnowledgeBase Open() { return KnowledgeBase::Open(db_path_, {corpus_}); }
  /// Changes the file's mtime without changing its content.
  void Touch(const std::string& rel) {
    const auto path = corpus_ / rel;
    fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(5));
  }
};

TEST_F(KnowledgeIndexTest, ReindexesOnlyFilesThatChanged) {
  WriteThree();
  {
    auto kb = Open();
    EXPECT_EQ(kb.LastReindex().scanned, 3);  // index.md is skipped
    EXPECT_EQ(kb.LastReindex().indexed, 3);
    EXPECT_GT(kb.LastReindex().passages, 3);
  }
  {
    auto kb = Open();
    EXPECT_EQ(kb.LastReindex().indexed, 0);
    EXPECT_EQ(kb.LastReindex().unchanged, 3);
  }
  auto kb = Open();
  WriteDoc("sub/b.md", Doc("Beta", "cuda", "repair", "compile_error", "nvcc error: identifier is undefined."));
  Touch("sub/b.md");  // a new mtime even on coarse-grained file systems
  ReindexStats s = kb.Reindex();
  EXPECT_EQ(s.indexed, 1);
  EXPECT_EQ(s.unchanged, 2);
  EXPECT_EQ(kb.Retrieve(RetrievalQuery{"identifier undefined", "cuda"}).size(), 1u);

  Touch("a.md");  // same content, new mtime: hashed, not re-indexed
  s = kb.Reindex();
  EXPECT_EQ(s.indexed, 0);
  EXPECT_EQ(s.touched, 1);
  EXPECT_EQ(kb.Reindex().touched, 0);  // the new mtime was stored

  fs::remove(corpus_ / "sub" / "c.md");
  WriteDoc("d.md", Doc("Delta", "cpu", "", "", "NUMA first touch."));
  s = kb.Reindex();
  EXPECT_EQ(s.removed, 1);
  EXPECT_EQ(s.indexed, 1);
  EXPECT_TRUE(kb.Retrieve(RetrievalQuery{"fusion elementwise"}).empty());
  EXPECT_EQ(kb.Documents().size(), 3u);
}

TEST_F(KnowledgeIndexTest, IndexAndExperiencesSurviveReopening) {
  WriteThree();
  std::vector<Passage> before;
  {
    auto kb = Open();
    before = kb.Retrieve(RetrievalQuery{"bandwidth prefetch", "cpu"});
    Experience x;
    x.problem = "softmax";
    x.platform = "cpu";
    x.op_signature = "sig";
    x.source = "int main() {}";
    x.fitness = 1.5;
    kb.RecordExperience(x);
  }
  auto kb = Open();
  EXPECT_EQ(kb.LastReindex().indexed, 0);
  const auto after = kb.Retrieve(RetrievalQuery{"bandwidth prefetch", "cpu"});
  ASSERT_EQ(after.size(), before.size());
  ASSERT_FALSE(after.empty());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].id, before[i].id);
    EXPECT_DOUBLE_EQ(after[i].score, before[i].score);
  }
  const auto records = kb.Experiences({});
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].source, "int main() {}");
  EXPECT_DOUBLE_EQ(records[0].fitness, 1.5);
}

TEST_F(KnowledgeIndexTest, InvalidFrontMatterIsSkippedWithAWarningNamingFileAndField) {
  WriteThree();
  WriteDoc("bad.md", "---\ntitle: Bad\nplatforms: [tpu]\n---\n# Bad\n\ntext\n");
  auto kb = Open();
  EXPECT_EQ(kb.LastReindex().indexed, 3);
  ASSERT_EQ(kb.LastReindex().warnings.size(), 1u);
  const std::string& w = kb.LastReindex().warnings[0];
  EXPECT_NE(w.find("bad.md"), std::string::npos) << w;
  EXPECT_NE(w.find("platforms"), std::string::npos) << w;
  EXPECT_NE(w.find("tpu"), std::string::npos) << w;
}

TEST_F(KnowledgeIndexTest, AddCopiesUserDocumentsAndIndexesThem) {
  WriteThree();
  auto kb = Open();
  const fs::path mine = dir_ / "mine";
  fs::create_directories(mine / "deep");
  std::ofstream(mine / "deep" / "chip.md") << Doc("Our chip", "cpu", "", "", "The zorblax unit has 3 lanes.");
  std::ofstream(mine / "notes.txt") << "ignored";
  AddResult r = kb.Add(mine);
  ASSERT_EQ(r.copied.size(), 1u);
  EXPECT_TRUE(fs::exists(kb.UserDir() / "mine" / "deep" / "chip.md"));
  EXPECT_EQ(r.reindex.indexed, 1);
  auto hits = kb.Retrieve(RetrievalQuery{"zorblax lanes", "cpu"});
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].corpus, "user");
  EXPECT_EQ(hits[0].document, "mine/deep/chip.md");

  // A single file, replaced when added again.
  const fs::path single = dir_ / "single.md";
  std::ofstream(single) << "# Plain note\n\nNo front matter: applies everywhere. quux.\n";
  EXPECT_EQ(kb.Add(single).reindex.indexed, 1);
  EXPECT_EQ(kb.Retrieve(RetrievalQuery{"quux", "cuda", "repair", "crash"}).size(), 1u);

  // Bad input: nothing copied, a readable error.
  std::ofstream(dir_ / "bad.md") << "---\nphases: [someday]\n---\nx\n";
  EXPECT_THROW(kb.Add(dir_ / "bad.md"), core::InvalidInputError);
  EXPECT_FALSE(fs::exists(kb.UserDir() / "bad.md"));
  EXPECT_THROW(kb.Add(dir_ / "missing.md"), core::InvalidInputError);
  EXPECT_THROW(kb.Add(mine / "notes.txt"), core::InvalidInputError);

  // User documents survive reopening without re-indexing.
  auto again = Open();
  EXPECT_EQ(again.LastReindex().indexed, 0);
  EXPECT_EQ(again.Documents().size(), 5u);
}

TEST(KnowledgeFrontMatterTest, ParsesListsDefaultsAndRejectsUnknownValues) {
  ParsedDocument d = ParseDocument(
      "---\ntitle: \"T\"\nplatforms: cpu, cuda\nphases: [repair]\nbottlenecks: []\ntags: [a, 'b c']\n"
      "owner: someone\n---\n# Heading\nbody\n",
      "x.md");
  EXPECT_EQ(d.meta.title, "T");
  EXPECT_EQ(d.meta.platforms, (std::vector<std::string>{"cpu", "cuda"}));
  EXPECT_EQ(d.meta.phases, (std::vector<std::string>{"repair"}));
  EXPECT_TRUE(d.meta.bottlenecks.empty());
  EXPECT_EQ(d.meta.tags, (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(d.body, "# Heading\nbody\n");

  ParsedDocument plain = ParseDocument("# From heading\n\ntext", "dir/plain.md");
  EXPECT_EQ(plain.meta.title, "From heading");
  EXPECT_EQ(plain.meta.platforms, (std::vector<std::string>{"any"}));
  EXPECT_EQ(ParseDocument("text only", "dir/stem.md").meta.title, "stem");

  EXPECT_THROW(ParseDocument("---\nbottlenecks: [slow]\n---\n", "x.md"), core::InvalidInputError);
  EXPECT_THROW(ParseDocument("---\ntitle: never closed\n", "x.md"), core::InvalidInputError);
  EXPECT_THROW(ParseDocument("---\njust words\n---\n", "x.md"), core::InvalidInputError);
}

TEST(KnowledgeSectionsTest, SplitsAtHeadingsOutsideCodeAndDropsSources) {
  const std::string body =
      "Intro text.\n\n# Title\n\n## Part one\n\nPara 1.\n\n```\n# not a heading\n```\n\n"
      "### Deeper\n\nPara 2.\n\n## Sources\n\n- a paper\n";
  const auto sections = SplitSections(body, "Doc");
  ASSERT_EQ(sections.size(), 3u);
  EXPECT_EQ(sections[0].heading, "Doc");
  EXPECT_EQ(sections[0].level, 0);
  EXPECT_EQ(sections[1].heading, "Part one");
  EXPECT_EQ(sections[1].level, 2);
  EXPECT_NE(sections[1].text.find("# not a heading"), std::string::npos);
  EXPECT_EQ(sections[2].heading, "Deeper");
  EXPECT_EQ(sections[2].level, 3);

  const std::string para(300, 'x');
  const auto passages = SplitPassages(para + "\n\n" + para + "\n\n" + para, 700);
  ASSERT_EQ(passages.size(), 2u);
  EXPECT_EQ(passages[0], para + "\n\n" + para);
  EXPECT_EQ(ApproxTokens("12345"), 2);
}

}  // namespace
}  // namespace kernelevolve::knowledge

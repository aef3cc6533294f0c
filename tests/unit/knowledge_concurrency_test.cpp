// Two processes writing one knowledge base at once lose nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <exception>
#include <fmt/format.h>
#include <map>

#include "knowledge/knowledge_base.h"
#include "knowledge_test_util.h"

namespace kernelevolve::knowledge {
namespace {

using KnowledgeConcurrencyTest = testing::KnowledgeTest;

constexpr int kPerWriter = 30;

/// Child body: open (and index) the shared file, then record kPerWriter experiences, each
/// in its own transaction. Exit code 0 on success.
[[noreturn]] void Writer(const std::filesystem::path& db, const std::filesystem::path& corpus, int writer) {
  int code = 0;
  try {
    auto kb = KnowledgeBase::Open(db, {corpus});
    for (int i = 0; i < kPerWriter; ++i) {
      Experience x;
      x.problem = fmt::format("writer{}", writer);
      x.platform = "cpu";
      x.op_signature = "sig";
      x.source = fmt::format("// writer {} record {}\n", writer, i);
      x.fitness = 1.0 + i;
      kb.RecordExperience(x);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "writer {}: {}\n", writer, e.what());
    code = 1;
  }
  _exit(code);
}

TEST_F(KnowledgeConcurrencyTest, TwoProcessesWritingAtOnceLoseNothing) {
  for (int i = 0; i < 12; ++i) {
    WriteDoc(fmt::format("d{}.md", i), testing::Doc(fmt::format("Doc {}", i), "cpu", "", "",
                                                     fmt::format("Body number {} about caches.", i)));
  }
  std::vector<pid_t> children;
  for (int w = 0; w < 2; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) Writer(db_path_, corpus_, w);  // both create the file and index it concurrently
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer failed, status " << status;
  }
  auto kb = KnowledgeBase::Open(db_path_, {corpus_});
  EXPECT_EQ(kb.LastReindex().indexed, 0);  // one of the writers indexed everything
  EXPECT_EQ(kb.Documents().size(), 12u);   // and nothing twice
  const auto records = kb.Experiences({});
  ASSERT_EQ(records.size(), 2u * kPerWriter);
  std::map<std::string, int> per_writer;
  for (const auto& x : records) ++per_writer[x.problem];
  EXPECT_EQ(per_writer["writer0"], kPerWriter);
  EXPECT_EQ(per_writer["writer1"], kPerWriter);
}

}  // namespace
}  // namespace kernelevolve::knowledge

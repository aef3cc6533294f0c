// The LLM response parser: fenced code, edits of the parent, and every rejection.
#include <gtest/gtest.h>

#include "operators/llm/response_parser.h"

namespace kernelevolve::operators::llm {
namespace {

const char* kKernel =
    "#include <dlpack/dlpack.h>\n"
    "extern \"C\" int kernelevolve_entry(const DLTensor* in, int32_t ni, DLTensor* out, int32_t no) {\n"
    "  float* o = static_cast<float*>(out[0].data);\n"
    "  o[0] = 1.0f;  // a } in a comment and a \"}\" in a string do not count\n"
    "  return 0;\n"
    "}\n";

TEST(LlmResponseParser, TakesTheFencedBlockThatDefinesTheEntryPoint) {
  std::string text = std::string("Vectorized with AVX2. It should be 2x faster.\n\n```bash\necho hi\n```\n\n```cpp\n") +
                     kKernel + "```\n";
  ParsedResponse r = ParseResponse(text, "");
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.form, "fenced");
  EXPECT_EQ(r.source, kKernel);
  EXPECT_EQ(r.rationale, "Vectorized with AVX2.");
}

TEST(LlmResponseParser, AppliesSearchReplaceEditsToTheParent) {
  std::string text =
      "Return early.\n<<<<<<< SEARCH\n  o[0] = 1.0f;  // a } in a comment and a \"}\" in a string do not count\n"
      "=======\n  o[0] = 2.0f;\n>>>>>>> REPLACE\n";
  ParsedResponse r = ParseResponse(text, kKernel);
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.form, "edit");
  EXPECT_NE(r.source.find("o[0] = 2.0f;"), std::string::npos);
  EXPECT_EQ(r.source.find("1.0f"), std::string::npos);
}

TEST(LlmResponseParser, RejectsEditsThatDoNotApply) {
  const std::string missing = "<<<<<<< SEARCH\nnot in the parent\n=======\nx\n>>>>>>> REPLACE\n";
  EXPECT_EQ(ParseResponse(missing, kKernel).reason, "edit 1: SEARCH text not found in the parent");
  const std::string twice = "<<<<<<< SEARCH\n  return 0;\n=======\n  return 1;\n>>>>>>> REPLACE\n";
  EXPECT_EQ(ParseResponse(twice, std::string(kKernel) + "  return 0;\n").reason,
            "edit 1: SEARCH text occurs more than once in the parent");
  EXPECT_NE(ParseResponse(missing, "").reason.find("needs a parent"), std::string::npos);
  EXPECT_NE(ParseResponse("<<<<<<< SEARCH\nx\n=======\n", kKernel).reason.find("not closed"), std::string::npos);
}

TEST(LlmResponseParser, RejectsTruncatedMissingAndInvalidCode) {
  EXPECT_NE(ParseResponse("```cpp\n#include <x>\nextern \"C\" int kernelevolve_entry(", "").reason.find("cut off"),
            std::string::npos);
  EXPECT_EQ(ParseResponse("I think you should use AVX2.", "").reason,
            "no fenced code block and no SEARCH/REPLACE edit in the response");
  EXPECT_EQ(ParseResponse("```cpp\nint main() {}\n```\n", "").reason, "no fenced code block defines kernelevolve_entry");
  ParsedResponse unbalanced = ParseResponse("```cpp\nextern \"C\" int kernelevolve_entry() {\n  if (x) {\n```\n", "");
  EXPECT_FALSE(unbalanced.ok);
  EXPECT_NE(unbalanced.reason.find("unbalanced '{'"), std::string::npos) << unbalanced.reason;
  ParsedResponse torch = ParseResponse(
      "```cpp\n#include <torch/extension.h>\nextern \"C\" int kernelevolve_entry() { return 0; }\n```\n", "");
  EXPECT_NE(torch.reason.find("PyTorch"), std::string::npos);
  ParsedResponse no_extern = ParseResponse("```cpp\nint kernelevolve_entry() { return 0; }\n```\n", "");
  EXPECT_NE(no_extern.reason.find("extern \"C\""), std::string::npos);
}

TEST(LlmResponseParser, PrefersTheLongestOfSeveralKernels) {
  std::string small = "extern \"C\" int kernelevolve_entry() { return 0; }\n";
  std::string text = "```cpp\n" + small + "```\nand the full one:\n```c++\n" + kKernel + "```\n";
  ParsedResponse r = ParseResponse(text, "");
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.source, kKernel);
}

}  // namespace
}  // namespace kernelevolve::operators::llm

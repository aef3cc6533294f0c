#include "operators/template/knob_vocabulary.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "operators/families/loop_nest/loop_nest_template.h"
#include "operators/families/loop_nest/triton_loop_nest_template.h"
#include "operators/template/cuda_pointwise.h"
#include "operators/template/knob_space.h"
#include "operators/template/scan_template.h"
#include "operators/template/triton_matmul.h"
#include "operators/template/triton_pointwise.h"
#include "operators/template/triton_softmax.h"

namespace kernelevolve::operators::templates {
namespace {

TEST(KnobVocabulary, NamesAreUniqueAndScheduleKnobsComeFirst) {
  std::set<std::string_view> names;
  bool family_seen = false;
  for (const KnobWord& w : KnobVocabulary()) {
    EXPECT_TRUE(names.insert(w.name).second) << "listed twice: " << w.name;
    EXPECT_FALSE(w.meaning.empty()) << w.name;
    if (!w.schedule) family_seen = true;
    EXPECT_FALSE(family_seen && w.schedule) << w.name << " is a schedule knob listed among family knobs";
  }
  EXPECT_NE(FindKnobWord("accumulator"), nullptr);
  EXPECT_EQ(FindKnobWord("acc"), nullptr);  // the spelling the vocabulary replaced
}

TEST(KnobVocabulary, ASpaceNamingAKnobOutsideItIsAnInternalError) {
  try {
    KnobSpace space({{"acc", {"double", "float"}, "double", nullptr, nullptr, "", nullptr, "{}"}});
    FAIL() << "expected InternalError";
  } catch (const core::InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("'acc' is not in the knob vocabulary"), std::string::npos) << e.what();
  }
}

// Every space that needs no graph, over its flags; the spaces built from a region or a
// spec are constructed (and so checked) by their families' tests.
TEST(KnobVocabulary, SpacesWithoutAGraphNameTheirKnobsFromIt) {
  std::vector<KnobSpace> spaces = {CudaPointwiseKnobSpace(), TritonMatmulKnobSpace(true), TritonPointwiseKnobSpace()};
  for (bool flag : {false, true}) {
    spaces.push_back(PointwiseKnobSpace(flag, 16, true));
    spaces.push_back(SoftmaxKnobSpace(flag));
    spaces.push_back(TritonSoftmaxKnobSpace(flag));
    spaces.push_back(families::TritonLoopNestKnobSpace(flag, flag, true, true, false, false, flag));
    spaces.push_back(ScanKnobSpace(true, flag, true));
    spaces.push_back(families::LoopNestKnobSpace(true, true, true, 16, flag, true));
    spaces.push_back(families::LoopNestKnobSpace(true, true, flag, 8, false, false));
  }
  std::set<std::string> accumulator_values;
  for (const KnobSpace& space : spaces) {
    for (const KnobDim& d : space.Dims()) {
      EXPECT_NE(FindKnobWord(d.name), nullptr) << d.name;
      if (d.name != "accumulator") continue;
      for (const auto& v : d.values) accumulator_values.insert(v.get<std::string>());
    }
  }
  // One spelling of the accumulator's values on every target.
  EXPECT_EQ(accumulator_values, (std::set<std::string>{"float32", "float64"}));
}

TEST(KnobVocabulary, DocsTableListsEveryWord) {
  std::ifstream in(std::filesystem::path(KE_SOURCE_DIR) / "docs" / "templates.md");
  ASSERT_TRUE(in) << "docs/templates.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t start = doc.find("## Knob vocabulary");
  ASSERT_NE(start, std::string::npos);
  const size_t end = doc.find("\n## ", start + 1);
  const std::string section = doc.substr(start, end - start);
  std::vector<std::string> documented;
  const std::regex row(R"(\n\| `([a-z_0-9]+)` \| (schedule|family) \|)");
  for (std::sregex_iterator it(section.begin(), section.end(), row), stop; it != stop; ++it) {
    documented.push_back((*it)[1].str() + ((*it)[2].str() == "schedule" ? "" : " (family)"));
  }
  std::vector<std::string> coded;
  for (const KnobWord& w : KnobVocabulary()) coded.push_back(std::string(w.name) + (w.schedule ? "" : " (family)"));
  EXPECT_EQ(documented, coded);
}

}  // namespace
}  // namespace kernelevolve::operators::templates

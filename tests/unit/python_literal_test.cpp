// Python literals written into exported model_new.py files (report/python_literal.h).
#include <gtest/gtest.h>

#include "report/python_literal.h"

namespace kernelevolve::report {
namespace {

TEST(PythonLiteralTest, LongStringKeepsTextReadableAndEscapesOnlyWhatPythonNeeds) {
  EXPECT_EQ(PyLongString("int x = 1;\nreturn x;\n"), "\"\"\"\\\nint x = 1;\nreturn x;\n\"\"\"");
  // Backslashes double (C++ "\n" inside the kernel stays two characters).
  EXPECT_EQ(PyLongString(R"(printf("a\n");)"), "\"\"\"\\\nprintf(\"a\\\\n\");\"\"\"");
}

TEST(PythonLiteralTest, LongStringNeverClosesEarly) {
  // A third quote in a row is escaped; so is a quote at the very end.
  EXPECT_EQ(PyLongString(R"(s = """doc""")"), "\"\"\"\\\ns = \"\"\\\"doc\"\"\\\"\"\"\"");
  EXPECT_EQ(PyLongString("x\""), "\"\"\"\\\nx\\\"\"\"\"");
  EXPECT_EQ(PyLongString("\"\""), "\"\"\"\\\n\"\\\"\"\"\"");
}

TEST(PythonLiteralTest, LongStringWritesControlCharactersAsEscapes) {
  // CR would be turned into a newline when Python reads its source; tab and newline stay.
  EXPECT_EQ(PyLongString("a\r\n\tb\x01"), "\"\"\"\\\na\\x0d\n\tb\\x01\"\"\"");
}

TEST(PythonLiteralTest, ShortLiterals) {
  EXPECT_EQ(PyShortString("ln.weight"), "\"ln.weight\"");
  EXPECT_EQ(PyShortString("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(PyIntList({64, 16384}), "[64, 16384]");
  EXPECT_EQ(PyIntList({}), "[]");
  EXPECT_EQ(PyFloat(1e-4), "0.0001");
  EXPECT_EQ(PyFloat(1e-5), "1e-05");
  EXPECT_EQ(PyFloat(2), "2.0");
}

}  // namespace
}  // namespace kernelevolve::report

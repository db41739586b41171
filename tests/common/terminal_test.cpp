#include "common/terminal.h"

#include <gtest/gtest.h>

namespace bt {
namespace {

TEST(Terminal, EscapesControlBytesAndInvalidUtf8) {
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");  // clear screen
  EXPECT_EQ(printable("\x1b]0;title\x07"), "\\x1b]0;title\\x07");  // retitle + BEL
  EXPECT_EQ(printable("x\xff\xfey"), "x\\xff\\xfey");
  EXPECT_EQ(printable("line1\nline2\r\t"), "line1\\x0aline2\\x0d\\x09");
  EXPECT_EQ(printable(std::string_view("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("\xc2\x9b" "31m"), "\\xc2\\x9b31m");  // C1 CSI in UTF-8
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");            // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");            // truncated
}

TEST(Terminal, KeepsPrintableUtf8) {
  EXPECT_EQ(printable("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xb1 \xc2\xa0 a\\b"),
            "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xb1 \xc2\xa0 a\\b");
  EXPECT_EQ(printable(""), "");
  for (int c = 0; c < 256; ++c) {
    const std::string out = printable(std::string(1, char(c)));
    for (unsigned char o : out) EXPECT_TRUE(o >= 0x20 && o < 0x7f) << c;
  }
}

}  // namespace
}  // namespace bt

// bridgetune's error line: the first line of whatever was thrown (no libtorch backtrace), escaped, capped.
TEST(ErrorLine, FirstLineOnlyEscapedAndCapped) {
  EXPECT_EQ(bt::error_line("x.bin: bad tensor\nException raised from foo at bar.cpp:1\nframe #0: ..."),
            "x.bin: bad tensor");
  EXPECT_EQ(bt::error_line("a\x1b[2Jb"), "a\\x1b[2Jb");
  const std::string long_line(5000, 'x');
  EXPECT_EQ(bt::error_line(long_line).size(), 2003u);
}

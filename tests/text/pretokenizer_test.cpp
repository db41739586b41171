#include "text/pretokenizer.h"

#include <gtest/gtest.h>

using namespace bt::text;
using V = std::vector<std::string_view>;

// Expected pieces are those of Python's `regex` module with GPT-2's pattern (the original encoder.py).
TEST(PreTokenizer, Gpt2Pattern) {
  const PreTokenizer& p = gpt2_pretokenizer();
  EXPECT_EQ(p.split("Hello  world!!\n\n x"), (V{"Hello", " ", " world", "!!", "\n\n", " x"}));
  EXPECT_EQ(p.split("I'm   3.14 ok "), (V{"I", "'m", "  ", " 3", ".", "14", " ok", " "}));
  EXPECT_EQ(p.split("  \t\n"), (V{"  \t\n"}));
  EXPECT_EQ(p.split("\xC3\xA9\xE7\x8C\xAB\xF0\x9F\x98\x80 x"), (V{"\xC3\xA9\xE7\x8C\xAB", "\xF0\x9F\x98\x80", " x"}));
  EXPECT_EQ(p.split("they'll we've it's"), (V{"they", "'ll", " we", "'ve", " it", "'s"}));
  EXPECT_TRUE(p.split("").empty());
}

// U+0085 (NEL) is Unicode White_Space: Python's regex and HF's Oniguruma treat it as \s (PCRE2's \s and
// JavaScript's do not, which is why the pattern spells the class out).
TEST(PreTokenizer, NextLineIsWhitespace) {
  EXPECT_EQ(gpt2_pretokenizer().split("x\xC2\x85!"), (V{"x", "\xC2\x85", "!"}));
  EXPECT_EQ(gpt2_pretokenizer().split("a\xE3\x80\x80" "b"), (V{"a", "\xE3\x80\x80", "b"}));
}

TEST(PreTokenizer, PiecesCoverTheText) {
  std::string s = "A  b\t\tc 12ab ,.; \xE2\x80\x94 \xF0\x9F\x87\xAB\xF0\x9F\x87\xB7 end   ";
  std::string joined;
  for (auto piece : gpt2_pretokenizer().split(s)) {
    EXPECT_FALSE(piece.empty());
    joined += piece;
  }
  EXPECT_EQ(joined, s);
}

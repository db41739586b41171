#include "text/utf8.h"

#include <gtest/gtest.h>

#include <set>

using namespace bt::text;

namespace {
const std::string R = "\xEF\xBF\xBD";  // U+FFFD
}

// Expected outputs are Python's bytes.decode("utf-8", errors="replace") (maximal subpart rule).
TEST(Utf8, SanitizeMatchesPythonReplace) {
  struct Case {
    std::string in, out;
  } cases[] = {
      {"plain ascii", "plain ascii"},
      {"\x80", R},
      {"a\xC3", "a" + R},
      {"\xE2\x82", R},
      {"\xE2\x82\xAC", "\xE2\x82\xAC"},
      {"\xF0\x9F\x98", R},
      {"\xC0\xAF", R + R},
      {"\xED\xA0\x80", R + R + R},
      {"\xF4\x90\x80\x80", R + R + R + R},
      {"\xFF\xFE", R + R},
      {"\xE0\x80\x80", R + R + R},
      {"\xF0\x80", R + R},
      {"\xE1\x80\xC0", R + R},
      {"\xF8\x88\x80\x80\x80", R + R + R + R + R},
      {"a\xF1\x80\x80\xE1\x80\xC2" "b", "a" + R + R + R + "b"},
      {std::string("nul\0byte", 8), std::string("nul\0byte", 8)},
  };
  for (auto& c : cases) {
    EXPECT_EQ(sanitize_utf8(c.in), c.out) << quote(c.in);
    EXPECT_EQ(is_valid_utf8(c.in), c.in == c.out) << quote(c.in);
  }
}

TEST(Utf8, ValidLongTextStaysValid) {
  std::string s;
  for (int i = 0; i < 100; ++i) s += "abcdefgh é 猫 😀 ";
  EXPECT_TRUE(is_valid_utf8(s));
  s[s.size() - 3] = '\xC3';
  EXPECT_FALSE(is_valid_utf8(s));
  EXPECT_TRUE(is_valid_utf8(sanitize_utf8(s)));
}

TEST(Utf8, ByteAlphabetIsGpt2s) {
  const auto& t = byte_to_cp();
  EXPECT_EQ(t['!'], uint32_t('!'));
  EXPECT_EQ(t[' '], 0x120u);   // "Ġ"
  EXPECT_EQ(t['\n'], 0x10Au);  // "Ċ"
  EXPECT_EQ(t[0], 0x100u);
  EXPECT_EQ(t[0xAD], 0x143u);
  std::set<uint32_t> distinct(t.begin(), t.end());
  EXPECT_EQ(distinct.size(), 256u);
  std::string all;
  for (int b = 0; b < 256; ++b) all += char(b);
  std::string back;
  ASSERT_TRUE(unicode_to_bytes(bytes_to_unicode(all), back));
  EXPECT_EQ(back, all);
  EXPECT_FALSE(unicode_to_bytes("a b", back));  // a plain space is not in the alphabet
  EXPECT_FALSE(unicode_to_bytes("\xE7\x8C\xAB", back));
}

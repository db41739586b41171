// The added-token matcher (text/added_matcher.h) against the plain scan it replaces (earliest start, ties to the
// longest, equal contents to the first), on random token sets and texts over a tiny alphabet (many overlaps).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "text/added_matcher.h"

using bt::text::AddedMatcher;

namespace {
// The reference: every content's first occurrence at or after pos; earliest wins, then the longest, then the first.
std::pair<size_t, int> scan(const std::vector<std::string>& contents, std::string_view text, size_t pos) {
  size_t best = std::string_view::npos;
  int index = -1;
  for (size_t i = 0; i < contents.size(); ++i) {
    if (contents[i].empty()) continue;
    const size_t f = text.find(contents[i], pos);
    if (f == std::string_view::npos) continue;
    if (f < best || (f == best && contents[i].size() > contents[size_t(index)].size())) best = f, index = int(i);
  }
  return {best, index};
}
}  // namespace

TEST(AddedMatcher, AgreesWithThePlainScan) {
  std::mt19937 rng(7);
  auto word = [&](size_t max_len) {
    std::string s(1 + rng() % max_len, 'a');
    for (char& c : s) c = char('a' + rng() % 3);
    return s;
  };
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> contents;
    for (int k = 0, n = 1 + int(rng() % 8); k < n; ++k) contents.push_back(word(5));
    if (round % 10 == 0) contents.push_back("");  // ignored
    AddedMatcher m;
    m.build(contents);
    const std::string text = word(60);
    for (size_t pos = 0; pos <= text.size(); ++pos) {
      const auto want = scan(contents, text, pos);
      const auto got = m.find(text, pos);
      ASSERT_EQ(got.first, want.first) << text << " @" << pos;
      if (want.first != std::string_view::npos)
        ASSERT_EQ(contents[size_t(got.second)], contents[size_t(want.second)]) << text << " @" << pos;
    }
  }
}

TEST(AddedMatcher, LongerTokenStartingEarlierWinsOverOneEndingFirst) {
  AddedMatcher m;
  m.build({"bc", "abcd", "<mask>"});
  EXPECT_EQ(m.find("xabcd", 0), (std::pair<size_t, int>{1, 1}));
  EXPECT_EQ(m.find("xabce", 0), (std::pair<size_t, int>{2, 0}));
  EXPECT_EQ(m.find("no tokens here", 0).second, -1);
  EXPECT_EQ(m.find("a <mask> b", 0), (std::pair<size_t, int>{2, 2}));
}

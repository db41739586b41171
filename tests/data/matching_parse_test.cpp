// Matching JSONL rows: labels as letters or indices, bad rows as one-line errors naming file and line, or as
// counted skips.
#include <gtest/gtest.h>

#include "common/error.h"
#include "data/matching_parse.h"

using namespace bt::data;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_matching_jsonl(text, "m.jsonl");
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MatchingParse, LettersAndIndicesNameAChoice) {
  auto p = parse_matching_jsonl(
      "{\"image\":\"a.jpg\",\"caption_choices\":[\"x\",\"y\",\"z\"],\"label\":\"C\"}\n\n"
      "{\"image\":\"b.jpg\",\"caption_choices\":[\"p\",\"q\"],\"label\":0}\n",
      "m.jsonl");
  ASSERT_EQ(p.rows.size(), 2u);
  EXPECT_EQ(p.rows[0].image, "a.jpg");
  EXPECT_EQ(p.rows[0].label, 2);
  EXPECT_EQ(p.rows[0].choices, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(p.rows[1].label, 0);
  EXPECT_EQ(p.rows[1].line, 3u);
  EXPECT_EQ(p.bad.count, 0u);
}

TEST(MatchingParse, BadRowsNameFileLineAndReason) {
  EXPECT_EQ(error_of("{\"image\":\"a.jpg\",\"caption_choices\":[\"x\",\"y\"],\"label\":\"E\"}"),
            "m.jsonl:1: label 4 is outside its 2 choices");
  EXPECT_EQ(error_of("\n{\"image\":\"a.jpg\",\"caption_choices\":[],\"label\":0}"),
            "m.jsonl:2: 'caption_choices' is an empty list");
  EXPECT_EQ(error_of("{\"image\":\"a.jpg\",\"label\":0}"), "m.jsonl:1: missing key 'caption_choices'");
  EXPECT_EQ(error_of("{\"image\":\"a.jpg\",\"caption_choices\":[\"x\"]}"), "m.jsonl:1: missing key 'label'");
  EXPECT_EQ(error_of("{\"image\":\"a.jpg\",\"caption_choices\":[\"x\",3],\"label\":0}"),
            "m.jsonl:1: 'caption_choices' holds a number (choices are non-empty strings)");
  EXPECT_EQ(error_of("{\"image\":\"a.jpg\",\"caption_choices\":[\"x\"],\"label\":\"xy\"}"),
            "m.jsonl:1: label 'xy' is not a letter A-Z or an index");
  EXPECT_EQ(error_of("[1,2]"), "m.jsonl:1: not a JSON object (got array)");
}

TEST(MatchingParse, SkipModeCountsBadRowsAndKeepsTheGoodOnes) {
  MatchingOptions o;
  o.on_bad_row = OnBad::kSkip;
  auto p = parse_matching_jsonl(
      "{\"image\":\"a.jpg\",\"caption_choices\":[\"x\"],\"label\":7}\n"
      "not json\n"
      "{\"image\":\"b.jpg\",\"caption_choices\":[\"x\",\"y\"],\"label\":\"b\"}\n",
      "m.jsonl", o);
  ASSERT_EQ(p.rows.size(), 3u);
  EXPECT_TRUE(p.rows[0].bad);
  EXPECT_TRUE(p.rows[1].bad);
  EXPECT_FALSE(p.rows[2].bad);
  EXPECT_EQ(p.rows[2].label, 1);
  EXPECT_EQ(p.bad.count, 2u);
  EXPECT_EQ(p.bad.first[0], "m.jsonl:1: label 7 is outside its 1 choices");
}

// RoBERTa framing, special tokens, truncation, padding and batching on the tiny hand-made vocabulary
// (fixtures/tiny: <s>=0 <pad>=1 </s>=2 <unk>=3, letters, a few merges, <mask>=21).
#include "text/tokenizer.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "text_test_util.h"

using namespace bt::text;
using namespace bt::text::test;
using Ids = std::vector<int32_t>;

TEST(Tokenizer, SpecialIds) {
  Tokenizer t = tiny();
  EXPECT_EQ(t.bos_id(), 0);
  EXPECT_EQ(t.pad_id(), 1);
  EXPECT_EQ(t.eos_id(), 2);
  EXPECT_EQ(t.unk_id(), 3);
  EXPECT_EQ(t.mask_id(), 21);
  EXPECT_EQ(t.vocab_size(), 22u);
}

TEST(Tokenizer, MergesByRank) {
  Tokenizer t = tiny();
  EXPECT_EQ(t.encode("the dog", false), (Ids{18, 16}));  // "the" "Ġdog"
  EXPECT_EQ(t.encode(" the", false), (Ids{19}));         // "Ġthe" needs "th e" before "Ġ the"
  EXPECT_EQ(t.encode("abc", false), (Ids{20, 6}));
  EXPECT_EQ(t.encode("bab", false), (Ids{5, 20}));
  EXPECT_EQ(t.encode("aab", false), (Ids{4, 20}));
  EXPECT_EQ(t.encode("", false), Ids{});
}

TEST(Tokenizer, RobertaFraming) {
  Tokenizer t = tiny();
  EXPECT_EQ(t.encode("the dog"), (Ids{0, 18, 16, 2}));
  EXPECT_EQ(t.encode(""), (Ids{0, 2}));
}

TEST(Tokenizer, UnknownBytesBecomeUnk) {
  Tokenizer t = tiny();
  EXPECT_EQ(t.encode("ax", false), (Ids{4, 3}));
  EXPECT_EQ(t.encode("\xE2\x82\xAC", false), (Ids{3, 3, 3}));  // one <unk> per byte of "€"
}

TEST(Tokenizer, SpecialTokensInText) {
  Tokenizer t = tiny();
  EXPECT_EQ(t.encode("the<s>dog", false), (Ids{18, 0, 8, 15}));
  // <mask> absorbs the whitespace on its left (RobertaTokenizer's lstrip=True), not on its right.
  EXPECT_EQ(t.encode("the <mask> dog", false), (Ids{18, 21, 16}));
  EXPECT_EQ(t.encode("<pad></s>", false), (Ids{1, 2}));
  EXPECT_EQ(t.encode("<s", false), (Ids{3, 3}));
}

TEST(Tokenizer, AddPrefixSpace) {
  Tokenizer t = Tokenizer::from_files(fixture("tiny/vocab.json"), fixture("tiny/merges.txt"), true);
  EXPECT_TRUE(t.add_prefix_space());
  EXPECT_EQ(t.encode("dog", false), (Ids{16}));
  EXPECT_EQ(t.encode(" dog", false), (Ids{16}));  // no second space
  EXPECT_EQ(t.decode(t.encode("dog", false)), " dog");
}

TEST(Tokenizer, TruncationKeepsEos) {
  Tokenizer t = tiny();
  EXPECT_EQ(t.encode("ab ab ab ab", true, 4), (Ids{0, 20, 7, 2}));
  EXPECT_EQ(t.encode("ab ab ab ab", false, 3), (Ids{20, 7, 20}));
  EXPECT_EQ(t.encode("ab", true, 4), (Ids{0, 20, 2}));  // shorter than max: untouched
  EXPECT_EQ(t.encode("ab", true, 3), (Ids{0, 20, 2}));
  EXPECT_THROW(t.encode("ab", true, 2), bt::Error);
  std::string long_text;
  for (int i = 0; i < 5000; ++i) long_text += "the dog ";
  Ids ids = t.encode(long_text, true, 128);
  ASSERT_EQ(ids.size(), 128u);
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(ids.back(), 2);
  EXPECT_EQ(ids[1], 18);
}

TEST(Tokenizer, InvalidUtf8IsReplacedNotFatal) {
  Tokenizer t = tiny();
  // U+FFFD is three bytes missing from the tiny vocabulary: <unk> x3 per invalid sequence.
  EXPECT_EQ(t.encode("a\xFF" "b", false), (Ids{4, 3, 3, 3, 5}));
  EXPECT_EQ(t.encode("a\xE2\x82" "b", false), (Ids{4, 3, 3, 3, 5}));
}

TEST(Tokenizer, Decode) {
  Tokenizer t = tiny();
  EXPECT_EQ(t.decode(Ids{0, 18, 16, 2}), "<s>the dog</s>");
  EXPECT_EQ(t.decode(Ids{0, 18, 16, 2}, true), "the dog");
  std::vector<int64_t> wide{18, 21};
  EXPECT_EQ(t.decode(wide), "the<mask>");
  EXPECT_THROW(t.decode(Ids{99}), bt::Error);
  EXPECT_THROW(t.decode(Ids{-1}), bt::Error);
}

TEST(Tokenizer, BatchPaddingAndMask) {
  Tokenizer t = tiny();
  std::vector<std::string> texts{"the dog", "", "ab ab ab ab ab"};
  BatchEncoding b = t.encode_batch(texts, 6, Padding::kMaxLength, 1);
  ASSERT_EQ(b.batch, 3);
  ASSERT_EQ(b.length, 6);
  EXPECT_EQ(b.input_ids, (std::vector<int64_t>{0, 18, 16, 2, 1, 1, 0, 2, 1, 1, 1, 1, 0, 20, 7, 20, 7, 2}));
  EXPECT_EQ(b.attention_mask, (std::vector<int64_t>{1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));

  BatchEncoding l = t.encode_batch(std::vector<std::string>{"the dog", "ab"}, 128, Padding::kLongest, 1);
  ASSERT_EQ(l.length, 4);
  EXPECT_EQ(l.input_ids, (std::vector<int64_t>{0, 18, 16, 2, 0, 20, 2, 1}));
  EXPECT_EQ(l.attention_mask, (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 0}));

  BatchEncoding e = t.encode_batch(std::vector<std::string>{}, 8, Padding::kLongest, 4);
  EXPECT_EQ(e.batch, 0);
  EXPECT_TRUE(e.input_ids.empty());
  EXPECT_THROW(t.encode_batch(texts, 0, Padding::kLongest, 1), bt::Error);
}

TEST(Tokenizer, BatchThreadsEqualSequential) {
  Tokenizer t = tiny();
  std::vector<std::string> texts;
  const char* words[] = {"the", "dog", "ab", "c", "x", "<mask>", "\xFF", "  ", "\n", "og"};
  uint32_t s = 12345;
  for (int i = 0; i < 500; ++i) {
    std::string text;
    int n = int(s % 40);
    for (int k = 0; k < n; ++k) {
      s = s * 1664525u + 1013904223u;
      text += words[(s >> 16) % 10];
      if ((s >> 8) & 1) text += ' ';
    }
    texts.push_back(text);
  }
  for (Padding p : {Padding::kMaxLength, Padding::kLongest}) {
    BatchEncoding one = t.encode_batch(texts, 32, p, 1);
    BatchEncoding four = t.encode_batch(texts, 32, p, 4);
    EXPECT_EQ(one.input_ids, four.input_ids);
    EXPECT_EQ(one.attention_mask, four.attention_mask);
    EXPECT_EQ(one.length, four.length);
    for (size_t i = 0; i < texts.size(); ++i) {
      Ids ids = t.encode(texts[i], true, 32);
      std::vector<int64_t> row(one.input_ids.begin() + int64_t(i) * one.length,
                               one.input_ids.begin() + int64_t(i) * one.length + int64_t(ids.size()));
      EXPECT_EQ(row, std::vector<int64_t>(ids.begin(), ids.end()));
    }
  }
}

TEST(Tokenizer, CopiesShareState) {
  Tokenizer a = tiny();
  Tokenizer b = a;
  EXPECT_EQ(a.encode("the dog"), b.encode("the dog"));
  EXPECT_EQ(b.id_to_token(16), "\xC4\xA0" "dog");
  EXPECT_EQ(b.id_to_token(999), "");
  EXPECT_EQ(b.token_to_id("<mask>"), 21);
}

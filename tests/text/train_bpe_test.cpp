#include "text/train_bpe.h"

#include <gtest/gtest.h>

#include "common/error.h"

using namespace bt::text;

namespace {
std::vector<std::string> captions() {
  std::vector<std::string> out;
  const char* colors[] = {"red", "green", "blue", "yellow"};
  const char* shapes[] = {"circle", "square", "triangle", "star"};
  for (int i = 0; i < 64; ++i)
    out.push_back(std::string("a cartoon of a ") + colors[i % 4] + " " + shapes[(i / 4) % 4] + " on a white background");
  return out;
}
}  // namespace

TEST(TrainBpe, LayoutAndDeterminism) {
  auto texts = captions();
  BpeTables t = train_bpe(texts, 300);
  ASSERT_EQ(t.vocab.size(), 300u);
  EXPECT_EQ(t.vocab[0], "<s>");
  EXPECT_EQ(t.vocab[1], "<pad>");
  EXPECT_EQ(t.vocab[2], "</s>");
  EXPECT_EQ(t.vocab[3], "<unk>");
  EXPECT_EQ(t.vocab[4 + ' '], "\xC4\xA0");  // byte 0x20 is "Ġ"
  EXPECT_EQ(t.vocab.back(), "<mask>");
  EXPECT_EQ(t.merges.size(), 300u - 261u);
  BpeTables again = train_bpe(texts, 300);
  EXPECT_EQ(again.vocab, t.vocab);
  EXPECT_EQ(again.merges, t.merges);
}

TEST(TrainBpe, TokenizesTrainingTextsCompactly) {
  auto texts = captions();
  Tokenizer tok = train_tokenizer(texts, 1000);
  EXPECT_EQ(tok.bos_id(), 0);
  EXPECT_EQ(tok.pad_id(), 1);
  EXPECT_EQ(tok.eos_id(), 2);
  EXPECT_EQ(tok.mask_id(), int32_t(tok.vocab_size()) - 1);
  // The texts run out of pairs long before 1000 tokens; every word of the captions became one token.
  EXPECT_LT(tok.vocab_size(), 1000u);
  auto ids = tok.encode(texts[5]);
  EXPECT_EQ(ids.size(), 2u + 10u);  // <s> + 10 words + </s>
  EXPECT_EQ(tok.decode(ids, true), texts[5]);
  // Unseen text still encodes (byte fallback through the 256 byte symbols) and round-trips.
  std::string unseen = "Zebra 42 \xE7\x8C\xAB!";
  EXPECT_EQ(tok.decode(tok.encode(unseen, false)), unseen);
}

TEST(TrainBpe, RejectsTinyVocab) { EXPECT_THROW(train_bpe({}, 100), bt::Error); }

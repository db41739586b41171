// Ids identical to two independent JavaScript implementations (npm gpt-3-encoder and js-tiktoken, which agree
// on every case) on the real GPT-2 vocabulary; see scripts/fixtures/tokenizer/README.md.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "text/tokenizer.h"
#include "text/utf8.h"
#include "text_test_util.h"

using namespace bt::text;
using namespace bt::text::test;

namespace {

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out += char(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

const Tokenizer& gpt2() {
  static const Tokenizer tok = [] {
    TempDir dir;
    std::string vocab = dir.file("encoder.json", gunzip_file(fixture("gpt2/encoder.json.gz")));
    std::string merges = dir.file("vocab.bpe", gunzip_file(fixture("gpt2/vocab.bpe.gz")));
    return Tokenizer::from_files(vocab, merges);
  }();
  return tok;
}

nlohmann::json vectors() {
  std::ifstream in(fixture("gpt2_vectors.json"));
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

}  // namespace

TEST(Gpt2Vectors, VocabularyLoads) {
  EXPECT_EQ(gpt2().vocab_size(), 50257u);
  EXPECT_EQ(gpt2().token_to_id("\xC4\xA0the"), 262);  // "Ġthe"
  EXPECT_EQ(gpt2().bos_id(), -1);                      // GPT-2 has no RoBERTa specials
}

TEST(Gpt2Vectors, IdsMatchReference) {
  auto v = vectors();
  ASSERT_GT(v.size(), 200u);
  size_t checked = 0;
  for (auto& c : v) {
    std::string text = unhex(c["hex"]);
    std::vector<int32_t> want = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(gpt2().encode(text, false), want) << c["name"] << ": " << bt::text::quote(text);
    ++checked;
  }
  EXPECT_EQ(checked, v.size());
}

TEST(Gpt2Vectors, DecodeRoundTripsValidUtf8) {
  for (auto& c : vectors()) {
    std::string name = c["name"];
    if (name.starts_with("invalid_")) continue;
    std::string text = unhex(c["hex"]);
    EXPECT_EQ(gpt2().decode(gpt2().encode(text, false)), text) << name;
  }
}

TEST(Gpt2Vectors, InvalidUtf8DecodesToReplacement) {
  auto ids = gpt2().encode("caf\xC3 ok", false);
  EXPECT_EQ(gpt2().decode(ids), "caf\xEF\xBF\xBD ok");
}

TEST(Gpt2Vectors, TruncationIsAPrefix) {
  for (auto& c : vectors()) {
    if (c["name"] != "long_paragraph" && c["name"] != "long_word") continue;
    std::vector<int32_t> want = c["ids"].get<std::vector<int32_t>>();
    ASSERT_GT(want.size(), 128u);
    want.resize(128);
    EXPECT_EQ(gpt2().encode(unhex(c["hex"]), false, 128), want) << c["name"];
  }
}

TEST(Gpt2Vectors, BatchThreadsEqualSequential) {
  auto v = vectors();
  std::vector<std::string> texts;
  for (auto& c : v) texts.push_back(unhex(c["hex"]));
  // GPT-2 has no <pad>: batches need a padded vocabulary, so check via the per-text path under threads.
  std::vector<std::vector<int32_t>> seq;
  for (auto& t : texts) seq.push_back(gpt2().encode(t, false, 64));
  std::vector<std::vector<int32_t>> par(texts.size());
  std::vector<std::thread> pool;
  for (int k = 0; k < 4; ++k)
    pool.emplace_back([&, k] {
      for (size_t i = k; i < texts.size(); i += 4) par[i] = gpt2().encode(texts[i], false, 64);
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(par, seq);
}

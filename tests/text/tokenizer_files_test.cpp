// Loading vocab.json + merges.txt / tokenizer.json / directories, saving, and one clear error per malformed file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "text/tokenizer.h"
#include "text_test_util.h"

using namespace bt::text;
using namespace bt::text::test;
using Ids = std::vector<int32_t>;

namespace {

// The error message of `fn`, which must throw bt::Error.
template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const bt::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no bt::Error thrown";
  return "";
}

const char* kTinyTokenizerJson = R"({
  "version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [
    {"id": 0, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": true},
    {"id": 1, "content": "<pad>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": true},
    {"id": 2, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": true},
    {"id": 3, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": true},
    {"id": 21, "content": "<mask>", "single_word": false, "lstrip": true, "rstrip": false, "normalized": false, "special": true}
  ],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": true, "add_prefix_space": false},
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "", "end_of_word_suffix": "",
    "fuse_unk": false,
    "vocab": {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "a": 4, "b": 5, "c": 6, "\u0120": 7, "d": 8, "o": 9, "g": 10,
      "t": 11, "h": 12, "e": 13, "\u0120d": 14, "og": 15, "\u0120dog": 16, "th": 17, "the": 18, "\u0120the": 19, "ab": 20, "<mask>": 21},
    "merges": ["\u0120 d", "o g", ["\u0120d", "og"], "t h", "th e", "\u0120 the", "a b"]}
})";

}  // namespace

TEST(TokenizerFiles, TokenizerJsonMatchesVocabMerges) {
  TempDir d;
  Tokenizer j = Tokenizer::from_tokenizer_json(d.file("tokenizer.json", kTinyTokenizerJson));
  Tokenizer f = tiny();
  for (const char* s : {"the dog", "abc <mask> the", "", "ab ab"}) EXPECT_EQ(j.encode(s), f.encode(s)) << s;
  EXPECT_EQ(j.mask_id(), 21);
  EXPECT_EQ(j.pad_id(), 1);
  // model.unk_token is null (as in HF's RoBERTa files): an unknown byte is dropped, as the HF crate does, and
  // its neighbours then merge.
  EXPECT_EQ(j.encode("axb", false), (Ids{20}));
}

TEST(TokenizerFiles, TokenizerJsonPostProcessorVariants) {
  TempDir d;
  auto j = nlohmann::json::parse(kTinyTokenizerJson);
  j["post_processor"] = nullptr;
  EXPECT_EQ(Tokenizer::from_tokenizer_json(d.file("a.json", j.dump())).encode("ab"), (Ids{20}));
  j["post_processor"] = nlohmann::json::parse(R"({"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "</s>", "type_id": 0}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                       "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}})");
  EXPECT_EQ(Tokenizer::from_tokenizer_json(d.file("b.json", j.dump())).encode("ab"), (Ids{0, 20, 2}));
  j["pre_tokenizer"]["add_prefix_space"] = true;
  EXPECT_EQ(Tokenizer::from_tokenizer_json(d.file("c.json", j.dump())).encode("dog"), (Ids{0, 16, 2}));
}

TEST(TokenizerFiles, FromDirPrefersTokenizerJson) {
  TempDir d;
  d.file("vocab.json", "{not json");
  d.file("merges.txt", "");
  d.file("tokenizer.json", kTinyTokenizerJson);
  EXPECT_EQ(Tokenizer::from_dir(d.path.string()).encode("the dog"), (Ids{0, 18, 16, 2}));
  TempDir e;
  EXPECT_NE(error_of([&] { Tokenizer::from_dir(e.path.string()); }).find("neither tokenizer.json"), std::string::npos);
  EXPECT_NE(error_of([&] { Tokenizer::from_dir("/nonexistent/dir"); }).find("not a directory"), std::string::npos);
}

TEST(TokenizerFiles, SaveRoundTrip) {
  TempDir d;
  Tokenizer t = Tokenizer::from_files(fixture("tiny/vocab.json"), fixture("tiny/merges.txt"), true);
  t.save(d.path.string());
  for (const char* f : {"vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"})
    EXPECT_TRUE(std::filesystem::exists(d.path / f)) << f;
  Tokenizer back = Tokenizer::from_dir(d.path.string());  // via tokenizer.json
  std::filesystem::remove(d.path / "tokenizer.json");
  Tokenizer back2 = Tokenizer::from_dir(d.path.string());  // via vocab.json + merges.txt + tokenizer_config.json
  for (const char* s : {"the dog", "abc <mask> the", "", "ab ab", "x\xFF"}) {
    EXPECT_EQ(back.encode(s), t.encode(s)) << s;
    EXPECT_EQ(back2.encode(s), t.encode(s)) << s;
  }
  EXPECT_TRUE(back2.add_prefix_space());
  EXPECT_EQ(back.mask_id(), 21);
}

TEST(TokenizerFiles, MalformedVocabJson) {
  TempDir d;
  std::string merges = d.file("merges.txt", "#version: 0.2\n");
  auto err = [&](const std::string& vocab) {
    return error_of([&] { Tokenizer::from_files(d.file("vocab.json", vocab), merges); });
  };
  EXPECT_NE(err("{\"a\": 0,").find("vocab.json: not valid JSON"), std::string::npos);
  EXPECT_NE(err("[1, 2]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(err("{\"a\": \"x\"}").find("the id of token \"a\" must be an integer"), std::string::npos);
  EXPECT_NE(err("{\"a\": -1}").find("the id of token \"a\" is out of range"), std::string::npos);
  EXPECT_NE(err("{\"a\": 99999999999}").find("the id of token \"a\" is out of range"), std::string::npos);
  EXPECT_NE(err("{\"a\": 0, \"b\": 0}").find("id 0 is used by both"), std::string::npos);
  EXPECT_NE(error_of([&] { Tokenizer::from_files(d.path.string() + "/missing.json", merges); }).find("cannot open"),
            std::string::npos);
}

TEST(TokenizerFiles, MalformedMerges) {
  TempDir d;
  std::string vocab = d.file("vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
  auto err = [&](const std::string& merges) {
    return error_of([&] { Tokenizer::from_files(vocab, d.file("merges.txt", merges)); });
  };
  EXPECT_NE(err("#version: 0.2\nab\n").find("merges.txt line 2: merge 1 \"ab\" is not two tokens"), std::string::npos);
  EXPECT_NE(err("a b c\n").find("is not two tokens"), std::string::npos);
  EXPECT_NE(err("a  b\n").find("is not two tokens"), std::string::npos);
  EXPECT_NE(err("a x\n").find("merge 1 \"a x\": its right token is not in the vocabulary"), std::string::npos);
  EXPECT_NE(err("b a\n").find("the merged token is not in the vocabulary"), std::string::npos);
  // CRLF line ends and the #version header are fine.
  EXPECT_EQ(Tokenizer::from_files(vocab, d.file("merges.txt", "#version: 0.2\r\na b\r\n")).encode("ab", false), (Ids{2}));
}

TEST(TokenizerFiles, MalformedTokenizerJson) {
  TempDir d;
  auto base = nlohmann::json::parse(kTinyTokenizerJson);
  auto err = [&](const nlohmann::json& j) {
    return error_of([&] { Tokenizer::from_tokenizer_json(d.file("tokenizer.json", j.dump())); });
  };
  auto with = [&](auto edit) {
    auto j = base;
    edit(j);
    return err(j);
  };
  EXPECT_NE(error_of([&] { Tokenizer::from_tokenizer_json(d.file("t.json", "{")); }).find("t.json: not valid JSON"),
            std::string::npos);
  EXPECT_NE(err(nlohmann::json::array()).find("top level"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j.erase("model"); }).find("missing \"model\""), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["model"]["type"] = "WordPiece"; }).find("only BPE"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["model"]["merges"] = 3; }).find("model.merges must be a list"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["model"]["merges"][0] = 7; }).find("model.merges[0]"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["model"]["merges"].push_back("q r"); }).find("not in the vocabulary"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["model"]["vocab"]["a"] = 1.5; }).find("must be an integer"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["pre_tokenizer"]["type"] = "Whitespace"; }).find("only ByteLevel"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["normalizer"] = {{"type", "NFC"}}; }).find("normalizer"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["added_tokens"][0]["id"] = "zero"; }).find("added_tokens[0].id"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["post_processor"]["type"] = "Foo"; }).find("post_processor type \"Foo\""),
            std::string::npos);
  EXPECT_NE(with([](auto& j) { j["post_processor"]["cls"] = {"<s>", 900}; }).find("post_processor uses id 900"),
            std::string::npos);
  EXPECT_NE(with([](auto& j) { j["model"]["continuing_subword_prefix"] = "##"; }).find("continuing_subword_prefix"),
            std::string::npos);
  // ids are range-checked before narrowing: 2^32 + 2 is not 2
  EXPECT_NE(with([](auto& j) { j["post_processor"]["cls"] = {"<s>", 4294967298LL}; }).find("out of range"),
            std::string::npos);
  EXPECT_NE(with([](auto& j) { j["added_tokens"][0]["id"] = 4294967296LL; }).find("out of range"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["model"]["vocab"]["a"] = -1; }).find("out of range"), std::string::npos);
}

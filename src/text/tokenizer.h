// RoBERTa-compatible byte-level BPE tokenizer: produces the ids Hugging Face's RobertaTokenizerFast produces.
//
//   auto tok = bt::text::Tokenizer::from_dir("ckpt/");          // tokenizer.json, else vocab.json + merges.txt
//   std::vector<int32_t> ids = tok.encode("a red circle");     // <s> ... </s>  (ids 0 ... 2 for RoBERTa)
//   auto batch = tok.encode_batch(captions, 128, bt::text::Padding::kLongest, 4);
//   tok.save("out/");                                          // vocab.json, merges.txt, tokenizer configs
//
// Pipeline: invalid UTF-8 -> U+FFFD (Python errors="replace"); special/added tokens are split out first
// (RoBERTa's <mask> absorbs whitespace on its left); each remaining segment gets a leading space when
// add_prefix_space is set, is split by the GPT-2 pattern (pretokenizer.h) and merged by BPE (bpe.h); then the
// framing (<s> A </s>) is added. Truncation keeps the framing: at most max_len - 2 content tokens.
// A Tokenizer is cheap to copy (shared immutable state) and safe to use from many threads at once.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bt::text {

enum class Padding {
  kMaxLength,  // every row has exactly max_len columns
  kLongest,    // rows are padded to the longest row of the batch (after truncation)
};

// Row-major [batch, length] tensors, ready for torch::from_blob(..., torch::kInt64).
struct BatchEncoding {
  std::vector<int64_t> input_ids;       // pad_id() after each row's last token
  std::vector<int64_t> attention_mask;  // 1 for real tokens, 0 for padding
  int64_t batch = 0, length = 0;
};

struct TokenizerImpl;

class Tokenizer {
 public:
  // tokenizer.json when present in `dir`, else vocab.json + merges.txt (add_prefix_space read from
  // tokenizer_config.json when there). Throws bt::Error naming the file at fault.
  static Tokenizer from_dir(const std::string& dir);
  // A Hugging Face "tokenizers" file: model.type BPE (merges as "a b" strings or [a, b] pairs), added_tokens,
  // pre_tokenizer ByteLevel (add_prefix_space), post_processor RobertaProcessing / TemplateProcessing / none.
  static Tokenizer from_tokenizer_json(const std::string& path);
  // GPT-2/RoBERTa vocab.json + merges.txt ("#version" header tolerated). RoBERTa's <s> <pad> </s> <unk> <mask>
  // become special tokens when the vocabulary has them; the framing <s> A </s> needs <s> and </s>.
  static Tokenizer from_files(const std::string& vocab_json, const std::string& merges_txt,
                              bool add_prefix_space = false);
  // In memory: vocab[i] is the token with id i (GPT-2 byte alphabet, as in vocab.json), merges in rank order.
  // Special tokens as in from_files.
  static Tokenizer from_vocab_merges(const std::vector<std::string>& vocab,
                                     const std::vector<std::pair<std::string, std::string>>& merges,
                                     bool add_prefix_space = false);

  // Ids of one text. max_len > 0 truncates, keeping the framing (max_len must leave room for it).
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true, int max_len = 0) const;
  // Every text encoded with truncation to max_len (> 0), padded per `padding`, on `threads` threads (<= 1: the
  // calling thread). Identical to encoding the texts one by one.
  BatchEncoding encode_batch(std::span<const std::string> texts, int max_len, Padding padding, int threads = 1,
                             bool add_special_tokens = true) const;
  // Text of the ids (invalid UTF-8 from partial tokens is replaced by U+FFFD). Throws on an unknown id.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;
  std::string decode(std::span<const int64_t> ids, bool skip_special_tokens = false) const;

  // Writes vocab.json, merges.txt, tokenizer_config.json and special_tokens_map.json into `dir` (created if
  // missing), as transformers' RobertaTokenizer.save_pretrained lays them out; from_dir reads them back.
  void save(const std::string& dir) const;

  // -1 when the vocabulary lacks the token.
  int32_t bos_id() const;
  int32_t eos_id() const;
  int32_t pad_id() const;
  int32_t unk_id() const;
  int32_t mask_id() const;
  int32_t token_to_id(std::string_view token) const;  // token as spelled in vocab.json; -1 when absent
  std::string id_to_token(int32_t id) const;          // "" when absent
  size_t vocab_size() const;                          // max id + 1, added tokens included
  bool add_prefix_space() const;

  explicit Tokenizer(std::shared_ptr<const TokenizerImpl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const TokenizerImpl> impl_;
};

}  // namespace bt::text

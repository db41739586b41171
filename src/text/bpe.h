// Byte-level BPE model: vocabulary, ranked merges and the merge loop, with a bounded thread-safe word cache.
// Tokens are stored as the raw bytes they stand for (vocab.json spells them in GPT-2's byte alphabet), so a
// pre-tokenized piece is merged straight from its UTF-8 bytes. Merging follows the Hugging Face tokenizers crate:
// repeatedly apply the lowest-rank adjacent pair, leftmost first (a heap, O(n log n) even for huge pieces).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace bt::text {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  // vocab: (token in GPT-2 alphabet, id); merges: pairs of tokens in rank order. Errors (bt::Error) name
  // `vocab_src` / `merges_src`: duplicate ids, negative ids, merges of tokens missing from the vocabulary.
  BpeModel(const std::vector<std::pair<std::string, int64_t>>& vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, const std::string& unk_token,
           const std::string& vocab_src, const std::string& merges_src);
  ~BpeModel();

  // Appends the ids of one pre-tokenized piece (raw UTF-8 bytes). Bytes missing from the vocabulary become
  // unk_id() when there is one and are dropped otherwise (as the HF crate does).
  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;

  int32_t token_to_id(std::string_view token) const;  // token in GPT-2 alphabet; -1 when absent
  int32_t bytes_to_id(std::string_view bytes) const;  // -1 when absent
  // The bytes a token stands for (its text verbatim when it is not in the byte alphabet, e.g. "<mask>").
  const std::string& id_to_bytes(int32_t id) const { return id_bytes_[id]; }
  const std::string& id_to_token(int32_t id) const { return id_token_[id]; }
  bool has_id(int32_t id) const { return id >= 0 && size_t(id) < id_token_.size() && present_[id]; }
  size_t id_limit() const { return id_token_.size(); }  // max id + 1
  size_t vocab_size() const { return n_tokens_; }
  int32_t unk_id() const { return unk_id_; }
  const std::vector<std::pair<int32_t, int32_t>>& merges() const { return merge_list_; }

 private:
  void merge_word(std::string_view piece, std::vector<int32_t>& out) const;

  std::vector<std::string> id_token_, id_bytes_;
  std::vector<char> present_;
  size_t n_tokens_ = 0;
  StringMap<int32_t> token_id_, bytes_id_;
  std::array<int32_t, 256> byte_id_;
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (left<<32 | right) -> (rank, new id)
  std::vector<std::pair<int32_t, int32_t>> merge_list_;
  int32_t unk_id_ = -1;
  struct Cache;
  std::unique_ptr<Cache> cache_;
};

}  // namespace bt::text

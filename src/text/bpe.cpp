#include "text/bpe.h"

#include <mutex>
#include <queue>
#include <shared_mutex>

#include "common/error.h"
#include "text/utf8.h"

namespace bt::text {

// Piece -> ids. Sharded so that batch threads rarely contend; readers share a lock. Bounded: once a shard is
// full new words are merged every time but not stored (captions reuse a small working set of words).
struct BpeModel::Cache {
  static constexpr size_t kShards = 16, kPerShard = 4096, kMaxPiece = 64;
  struct Shard {
    mutable std::shared_mutex mu;
    StringMap<std::vector<int32_t>> map;
  };
  std::array<Shard, kShards> shards;
};

namespace {
// Ids index flat tables, so refuse ids far beyond the number of tokens instead of allocating gigabytes.
constexpr int64_t kIdSlack = 1 << 16;
inline uint64_t pair_key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
}  // namespace

BpeModel::BpeModel(const std::vector<std::pair<std::string, int64_t>>& vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges, const std::string& unk_token,
                   const std::string& vocab_src, const std::string& merges_src)
    : cache_(std::make_unique<Cache>()) {
  int64_t max_id = -1, id_end = int64_t(vocab.size()) + kIdSlack;
  for (auto& [tok, id] : vocab) {
    if (id < 0 || id >= id_end)
      fail(vocab_src, ": token ", quote(tok), " has id ", id, " (must be 0..", id_end - 1, " for ", vocab.size(),
           " tokens)");
    max_id = std::max(max_id, id);
  }
  id_token_.resize(size_t(max_id + 1));
  id_bytes_.resize(size_t(max_id + 1));
  present_.assign(size_t(max_id + 1), 0);
  byte_id_.fill(-1);
  std::string bytes;
  for (auto& [tok, id] : vocab) {
    if (present_[id]) fail(vocab_src, ": id ", id, " is used by both ", quote(id_token_[id]), " and ", quote(tok));
    if (!token_id_.emplace(tok, int32_t(id)).second) fail(vocab_src, ": token ", quote(tok), " appears twice");
    present_[id] = 1;
    ++n_tokens_;
    id_token_[id] = tok;
    if (unicode_to_bytes(tok, bytes) && !bytes.empty()) {
      id_bytes_[id] = bytes;
      bytes_id_.emplace(bytes, int32_t(id));
      if (bytes.size() == 1) byte_id_[static_cast<unsigned char>(bytes[0])] = int32_t(id);
    } else {
      id_bytes_[id] = tok;
    }
  }
  if (!unk_token.empty()) {
    auto it = token_id_.find(unk_token);
    if (it != token_id_.end()) unk_id_ = it->second;
  }
  merge_list_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    auto& [a, b] = merges[r];
    auto ia = token_id_.find(a), ib = token_id_.find(b), iab = token_id_.find(a + b);
    const char* what = ia == token_id_.end() ? "its left token" : ib == token_id_.end() ? "its right token"
                       : iab == token_id_.end() ? "the merged token" : nullptr;
    if (what)
      fail(merges_src, ": merge ", r + 1, " ", quote(a + " " + b), ": ", what, " is not in the vocabulary (", vocab_src, ")");
    // A repeated pair keeps its first (lowest) rank, as the reference implementations do.
    if (merges_.emplace(pair_key(ia->second, ib->second), std::make_pair(int32_t(r), iab->second)).second)
      merge_list_.emplace_back(ia->second, ib->second);
  }
}

BpeModel::~BpeModel() = default;

int32_t BpeModel::token_to_id(std::string_view token) const {
  auto it = token_id_.find(token);
  return it == token_id_.end() ? -1 : it->second;
}

int32_t BpeModel::bytes_to_id(std::string_view bytes) const {
  auto it = bytes_id_.find(bytes);
  return it == bytes_id_.end() ? -1 : it->second;
}

void BpeModel::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.empty()) return;
  if (piece.size() > Cache::kMaxPiece) return merge_word(piece, out);
  auto& shard = cache_->shards[StringHash{}(piece) % Cache::kShards];
  {
    std::shared_lock lock(shard.mu);
    auto it = shard.map.find(piece);
    if (it != shard.map.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  size_t start = out.size();
  merge_word(piece, out);
  std::unique_lock lock(shard.mu);
  if (shard.map.size() < Cache::kPerShard)
    shard.map.emplace(std::string(piece), std::vector<int32_t>(out.begin() + start, out.end()));
}

void BpeModel::merge_word(std::string_view piece, std::vector<int32_t>& out) const {
  // Symbols form a doubly linked list over a flat array; merging removes the right symbol, so 0 stays the head.
  struct Sym {
    int32_t id;
    int32_t prev, next;
  };
  std::vector<Sym> syms;
  syms.reserve(piece.size());
  for (unsigned char c : piece) {
    int32_t id = byte_id_[c];
    if (id < 0) {
      if (unk_id_ < 0) continue;
      id = unk_id_;
    }
    int32_t i = int32_t(syms.size());
    syms.push_back({id, i - 1, i + 1});
  }
  if (syms.empty()) return;
  syms.back().next = -1;
  struct Cand {
    int32_t rank, pos, new_id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<>> heap;
  auto push = [&](int32_t pos) {
    int32_t nx = syms[pos].next;
    if (nx < 0) return;
    auto it = merges_.find(pair_key(syms[pos].id, syms[nx].id));
    if (it != merges_.end()) heap.push({it->second.first, pos, it->second.second});
  };
  for (int32_t i = 0; i + 1 < int32_t(syms.size()); ++i) push(i);
  while (!heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    Sym& s = syms[c.pos];
    if (s.id < 0 || s.next < 0) continue;  // merged away, or now the last symbol
    Sym& r = syms[s.next];
    auto it = merges_.find(pair_key(s.id, r.id));
    if (it == merges_.end() || it->second.second != c.new_id) continue;  // stale entry
    s.id = c.new_id;
    r.id = -1;
    s.next = r.next;
    if (s.next >= 0) syms[s.next].prev = c.pos;
    if (s.prev >= 0) push(s.prev);
    push(c.pos);
  }
  for (int32_t i = 0; i >= 0; i = syms[i].next) out.push_back(syms[i].id);
}

}  // namespace bt::text

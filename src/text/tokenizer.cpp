#include "text/tokenizer.h"

#include <algorithm>
#include <thread>

#include "common/error.h"
#include "text/pretokenizer.h"
#include "text/tokenizer_impl.h"
#include "text/utf8.h"

namespace bt::text {

namespace {

bool is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Encodes `text` (valid UTF-8) into `out`, stopping once `out` holds `limit` ids (limit < 0: no limit): later
// pieces never change earlier ids, so stopping early gives the same truncated result.
void encode_content(const TokenizerImpl& t, std::string_view text, std::vector<int32_t>& out, int64_t limit) {
  const PreTokenizer& pre = gpt2_pretokenizer();
  auto full = [&] { return limit >= 0 && int64_t(out.size()) >= limit; };
  auto encode_segment = [&](std::string_view seg) {
    if (seg.empty() || full()) return;
    std::string with_space;
    if (t.add_prefix_space && seg.front() != ' ') {
      with_space.reserve(seg.size() + 1);
      with_space += ' ';
      with_space += seg;
      seg = with_space;
    }
    pre.split(seg, [&](std::string_view piece) {
      t.model->encode_piece(piece, out);
      return !full();
    });
  };
  if (t.added.empty()) return encode_segment(text);
  size_t pos = 0;
  while (pos < text.size() && !full()) {
    // Earliest occurrence of any added token, ties to the longest (text/added_matcher.h: linear in the text).
    const auto [best, index] = t.added_matcher.find(text, pos);
    const AddedToken* tok = index >= 0 ? &t.added[size_t(index)] : nullptr;
    if (!tok) {
      encode_segment(text.substr(pos));
      break;
    }
    size_t seg_end = best, next = best + tok->content.size();
    if (tok->lstrip)
      while (seg_end > pos && is_ascii_space(text[seg_end - 1])) --seg_end;
    if (tok->rstrip)
      while (next < text.size() && is_ascii_space(text[next])) ++next;
    encode_segment(text.substr(pos, seg_end - pos));
    if (!full()) out.push_back(tok->id);
    pos = next;
  }
}

}  // namespace

void TokenizerImpl::finish(bool roberta_framing) {
  auto id_of = [&](const char* name) { return lookup(name); };
  bos = id_of("<s>");
  pad = id_of("<pad>");
  eos = id_of("</s>");
  unk = id_of("<unk>");
  mask = id_of("<mask>");
  size_t limit = model->id_limit();
  for (auto& a : added) limit = std::max(limit, size_t(a.id) + 1);
  special.assign(limit, 0);
  added_text.assign(limit, std::string());
  for (auto& a : added) {
    if (a.special) special[a.id] = 1;
    if (!model->has_id(a.id)) added_text[a.id] = a.content;
  }
  auto add_special = [&](int32_t id, const char* name, bool lstrip) {
    if (id < 0) return;
    special[id] = 1;
    for (auto& a : added)
      if (a.content == name) return;
    added.push_back({name, id, true, lstrip, false});
  };
  add_special(bos, "<s>", false);
  add_special(pad, "<pad>", false);
  add_special(eos, "</s>", false);
  add_special(unk, "<unk>", false);
  add_special(mask, "<mask>", true);  // RobertaTokenizer: AddedToken("<mask>", lstrip=True)
  if (roberta_framing && bos >= 0 && eos >= 0) {
    prefix = {bos};
    suffix = {eos};
  }
  std::stable_sort(added.begin(), added.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  added.erase(std::remove_if(added.begin(), added.end(), [](const AddedToken& a) { return a.content.empty(); }),
              added.end());
  std::vector<std::string> contents;
  contents.reserve(added.size());
  for (const auto& a : added) contents.push_back(a.content);
  added_matcher.build(contents);
}

int32_t TokenizerImpl::lookup(std::string_view token) const {
  for (auto& a : added)
    if (a.content == token) return a.id;
  return model->token_to_id(token);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens, int max_len) const {
  const TokenizerImpl& t = *impl_;
  int64_t frame = add_special_tokens ? int64_t(t.prefix.size() + t.suffix.size()) : 0;
  if (max_len < 0 || (max_len > 0 && max_len <= frame))
    fail("tokenizer: max_seq_length ", max_len, " leaves no room for text between the ", frame, " special tokens");
  std::vector<int32_t> out;
  if (add_special_tokens) out = t.prefix;
  int64_t limit = max_len > 0 ? max_len - int64_t(t.suffix.size() * add_special_tokens) : -1;
  if (is_valid_utf8(text)) {
    encode_content(t, text, out, limit);
  } else {
    std::string clean = sanitize_utf8(text);
    encode_content(t, clean, out, limit);
  }
  if (limit >= 0 && int64_t(out.size()) > limit) out.resize(size_t(limit));
  if (add_special_tokens) out.insert(out.end(), t.suffix.begin(), t.suffix.end());
  return out;
}

BatchEncoding Tokenizer::encode_batch(std::span<const std::string> texts, int max_len, Padding padding,
                                      int threads, bool add_special_tokens) const {
  if (max_len <= 0) fail("tokenizer: encode_batch needs max_seq_length > 0 (got ", max_len, ")");
  if (impl_->pad < 0) fail("tokenizer: the vocabulary has no <pad> token, so batches cannot be padded");
  std::vector<std::vector<int32_t>> rows(texts.size());
  auto work = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) rows[i] = encode(texts[i], add_special_tokens, max_len);
  };
  size_t n = texts.size();
  size_t nthreads = size_t(std::clamp<int64_t>(threads, 1, int64_t(std::max<size_t>(n, 1))));
  if (nthreads <= 1) {
    work(0, n);
  } else {
    std::vector<std::thread> pool;
    std::exception_ptr error;
    std::mutex mu;
    for (size_t k = 0; k < nthreads; ++k) {
      pool.emplace_back([&, k] {
        try {
          work(n * k / nthreads, n * (k + 1) / nthreads);
        } catch (...) {
          std::lock_guard lock(mu);
          if (!error) error = std::current_exception();
        }
      });
    }
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
  }
  BatchEncoding b;
  b.batch = int64_t(n);
  b.length = max_len;
  if (padding == Padding::kLongest) {
    b.length = 0;
    for (auto& r : rows) b.length = std::max<int64_t>(b.length, int64_t(r.size()));
  }
  b.input_ids.assign(size_t(b.batch * b.length), impl_->pad);
  b.attention_mask.assign(size_t(b.batch * b.length), 0);
  for (size_t i = 0; i < n; ++i) {
    std::copy(rows[i].begin(), rows[i].end(), b.input_ids.begin() + int64_t(i) * b.length);
    std::fill_n(b.attention_mask.begin() + int64_t(i) * b.length, rows[i].size(), 1);
  }
  return b;
}

namespace {
template <class Id>
std::string decode_impl(const TokenizerImpl& t, std::span<const Id> ids, bool skip_special) {
  std::string bytes;
  for (Id id : ids) {
    bool in_model = id >= 0 && int64_t(id) < int64_t(t.model->id_limit()) && t.model->has_id(int32_t(id));
    bool in_added = id >= 0 && int64_t(id) < int64_t(t.added_text.size()) && !t.added_text[size_t(id)].empty();
    if (!in_model && !in_added) fail("tokenizer: cannot decode id ", int64_t(id), ": not in the vocabulary");
    if (skip_special && size_t(id) < t.special.size() && t.special[size_t(id)]) continue;
    bytes += in_added ? t.added_text[size_t(id)] : t.model->id_to_bytes(int32_t(id));
  }
  return sanitize_utf8(bytes);
}
}  // namespace

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  return decode_impl(*impl_, ids, skip_special_tokens);
}
std::string Tokenizer::decode(std::span<const int64_t> ids, bool skip_special_tokens) const {
  return decode_impl(*impl_, ids, skip_special_tokens);
}

int32_t Tokenizer::bos_id() const { return impl_->bos; }
int32_t Tokenizer::eos_id() const { return impl_->eos; }
int32_t Tokenizer::pad_id() const { return impl_->pad; }
int32_t Tokenizer::unk_id() const { return impl_->unk; }
int32_t Tokenizer::mask_id() const { return impl_->mask; }
int32_t Tokenizer::token_to_id(std::string_view token) const { return impl_->lookup(token); }
std::string Tokenizer::id_to_token(int32_t id) const {
  if (id >= 0 && size_t(id) < impl_->added_text.size() && !impl_->added_text[id].empty()) return impl_->added_text[id];
  return impl_->model->has_id(id) ? impl_->model->id_to_token(id) : std::string();
}
size_t Tokenizer::vocab_size() const { return impl_->special.size(); }
bool Tokenizer::add_prefix_space() const { return impl_->add_prefix_space; }

}  // namespace bt::text

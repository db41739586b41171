#include "text/train_bpe.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "common/error.h"
#include "text/bpe.h"
#include "text/pretokenizer.h"
#include "text/utf8.h"

namespace bt::text {

BpeTables train_bpe(std::span<const std::string> texts, size_t vocab_size) {
  if (vocab_size < 261) fail("train_bpe: vocab_size ", vocab_size, " is below 261 (4 specials + 256 bytes + <mask>)");
  BpeTables t;
  t.vocab = {"<s>", "<pad>", "</s>", "<unk>"};
  for (int b = 0; b < 256; ++b) t.vocab.push_back(bytes_to_unicode(std::string(1, char(b))));
  StringMap<int32_t> ids;
  for (size_t i = 0; i < t.vocab.size(); ++i) ids.emplace(t.vocab[i], int32_t(i));

  // Distinct pieces in sorted order (std::map) so that the result never depends on hash iteration order.
  std::map<std::string, int64_t> counts;
  for (const std::string& text : texts) {
    std::string clean = sanitize_utf8(text);
    gpt2_pretokenizer().split(clean, [&](std::string_view p) {
      ++counts[std::string(p)];
      return true;
    });
  }
  struct Word {
    std::vector<int32_t> syms;
    int64_t count;
  };
  std::vector<Word> words;
  words.reserve(counts.size());
  for (auto& [piece, n] : counts) {
    Word w{{}, n};
    for (unsigned char c : piece) w.syms.push_back(4 + c);
    words.push_back(std::move(w));
  }

  auto key = [](int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); };
  while (t.vocab.size() + 1 < vocab_size) {
    std::unordered_map<uint64_t, int64_t> pairs;
    for (const Word& w : words)
      for (size_t i = 0; i + 1 < w.syms.size(); ++i) pairs[key(w.syms[i], w.syms[i + 1])] += w.count;
    uint64_t best = 0;
    int64_t best_n = 0;
    for (auto [k, n] : pairs)
      if (n > best_n || (n == best_n && k < best)) best = k, best_n = n;
    if (best_n == 0) break;
    int32_t a = int32_t(best >> 32), b = int32_t(best & 0xffffffffu);
    std::string merged = t.vocab[a] + t.vocab[b];
    auto [it, fresh] = ids.emplace(merged, int32_t(t.vocab.size()));
    if (fresh) t.vocab.push_back(merged);
    t.merges.emplace_back(t.vocab[a], t.vocab[b]);
    int32_t m = it->second;
    for (Word& w : words) {
      size_t out = 0;
      for (size_t i = 0; i < w.syms.size(); ++i) {
        if (i + 1 < w.syms.size() && w.syms[i] == a && w.syms[i + 1] == b) {
          w.syms[out++] = m;
          ++i;
        } else {
          w.syms[out++] = w.syms[i];
        }
      }
      w.syms.resize(out);
    }
  }
  t.vocab.push_back("<mask>");
  return t;
}

Tokenizer train_tokenizer(std::span<const std::string> texts, size_t vocab_size) {
  BpeTables t = train_bpe(texts, vocab_size);
  return Tokenizer::from_vocab_merges(t.vocab, t.merges);
}

}  // namespace bt::text

// GPT-2 / RoBERTa pre-tokenizer: splits valid UTF-8 text into the pieces BPE runs on, with the pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// compiled once with PCRE2 (UTF + UCP + JIT). `\s` is spelled out as Unicode White_Space, which is what the
// Hugging Face tokenizers crate (Oniguruma) matches; PCRE2's own \s would miss U+0085. Thread-safe: the compiled
// pattern is shared and each call uses its own match data.
#pragma once
#include <string_view>
#include <vector>

namespace bt::text {

class PreTokenizer {
 public:
  PreTokenizer();
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Calls fn(piece) for each piece of `text`, in order, until fn returns false; the pieces concatenate to
  // `text`. `text` must be valid UTF-8 (see sanitize_utf8).
  template <class Fn>
  void split(std::string_view text, Fn&& fn) const {
    Matcher m(*this);
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = m.next(text, pos);
      if (!fn(text.substr(pos, end - pos))) return;
      pos = end;
    }
  }
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  // Per-call match state; next() returns the end of the piece starting at `pos`.
  class Matcher {
   public:
    explicit Matcher(const PreTokenizer& p);
    ~Matcher();
    size_t next(std::string_view text, size_t pos);

   private:
    const PreTokenizer& p_;
    void* md_;
  };
  void* code_ = nullptr;  // pcre2_code_8*
  bool jit_ = false;
};

// The process-wide instance (the pattern never changes).
const PreTokenizer& gpt2_pretokenizer();

}  // namespace bt::text

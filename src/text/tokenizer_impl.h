// Internal state of a Tokenizer, shared by the loaders (load.cpp), the encoder (tokenizer.cpp) and save.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "text/added_matcher.h"
#include "text/bpe.h"
#include "text/tokenizer.h"

namespace bt::text {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = true;
  bool lstrip = false, rstrip = false;  // absorb ASCII whitespace on that side
};

struct TokenizerImpl {
  std::unique_ptr<BpeModel> model;
  std::vector<AddedToken> added;           // split out of the text before BPE; longest content first
  AddedMatcher added_matcher;              // over `added` (built by finish()): linear-time search
  std::vector<int32_t> prefix, suffix;     // framing of a single sequence (RoBERTa: <s> / </s>)
  bool add_prefix_space = false;
  int32_t bos = -1, eos = -1, pad = -1, unk = -1, mask = -1;
  std::vector<std::string> added_text;     // by id: content of an added token that is not in the model ("" else)
  std::vector<char> special;               // by id: 1 for special tokens (skipped by decode(skip_special))

  // Fills bos..mask from RoBERTa's token names, registers them as special added tokens, sets the framing
  // <s> A </s> when `roberta_framing` and both exist, and sorts `added`.
  void finish(bool roberta_framing);
  int32_t lookup(std::string_view token) const;  // added tokens, then the model vocabulary
};

}  // namespace bt::text

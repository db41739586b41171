// A small deterministic byte-level BPE trainer, for the built-in demo (a random-init model with a small
// vocabulary that still tokenizes its generated captions with real BPE). Not a replacement for a pretrained
// vocabulary: users fine-tuning a checkpoint bring its tokenizer files.
//
// Layout of the result (RoBERTa's conventions): ids 0..3 = <s> <pad> </s> <unk>; 4..259 = the 256 byte symbols
// in byte order (GPT-2 alphabet); then one token per merge, most frequent pair first (ties: lowest ids); the last
// id is <mask>. Pieces are the GPT-2 pre-tokenizer's (add_prefix_space off). The same texts and size always give
// the same vocabulary; fewer tokens than asked come back when the texts run out of pairs.
#pragma once
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "text/tokenizer.h"

namespace bt::text {

struct BpeTables {
  std::vector<std::string> vocab;                            // vocab[id], spelled as in vocab.json
  std::vector<std::pair<std::string, std::string>> merges;  // rank order, as in merges.txt
};

// vocab_size counts everything (specials, bytes, merges, <mask>); at least 261.
BpeTables train_bpe(std::span<const std::string> texts, size_t vocab_size);

// train_bpe + Tokenizer::from_vocab_merges.
Tokenizer train_tokenizer(std::span<const std::string> texts, size_t vocab_size);

}  // namespace bt::text

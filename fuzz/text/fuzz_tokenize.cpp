// Arbitrary bytes as a caption: encode must never crash, must give ids in the vocabulary, keep the framing
// under truncation, and decode must give valid UTF-8. Uses a BPE trained on a few texts (all 256 bytes known).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "text/tokenizer.h"
#include "text/train_bpe.h"
#include "text/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bt::text::Tokenizer tok = [] {
    std::vector<std::string> texts = {"a dog on a red bench", "two cats, three dogs!", "caf\xC3\xA9 \xE7\x8C\xAB\xE3\x81\xAE",
                                      "the the the <mask> 123 4567", "  spaces\n\ttabs  "};
    return bt::text::train_tokenizer(texts, 400);
  }();
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<int32_t> ids = tok.encode(text);
  if (ids.size() < 2 || ids.front() != tok.bos_id() || ids.back() != tok.eos_id()) std::abort();
  for (int32_t id : ids)
    if (id < 0 || size_t(id) >= tok.vocab_size()) std::abort();
  std::vector<int32_t> cut = tok.encode(text, true, 8);
  if (cut.size() > 8 || cut.back() != tok.eos_id()) std::abort();
  for (size_t i = 0; i + 1 < cut.size(); ++i)
    if (cut[i] != ids[i]) std::abort();  // truncation is a prefix of the full encoding
  std::string back = tok.decode(tok.encode(text, false));
  if (!bt::text::is_valid_utf8(back)) std::abort();
  // Without special-token strings in the text, decoding gives back the (sanitized) text.
  std::string clean = bt::text::sanitize_utf8(text);
  if (clean.find('<') == std::string::npos && back != clean) std::abort();
  return 0;
}

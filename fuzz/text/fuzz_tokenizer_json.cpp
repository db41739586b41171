// Arbitrary bytes as tokenizer.json (and as vocab.json / merges.txt): loading must either succeed or throw
// bt::Error, never crash or allocate without bound; a loaded tokenizer must encode and decode.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "common/error.h"
#include "text/tokenizer.h"

namespace {
std::string tmp_file(const char* name, const uint8_t* data, size_t size) {
  std::string path = "/tmp/bt_fuzz_tok_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

void exercise(const bt::text::Tokenizer& t) {
  auto ids = t.encode("a dog <mask> caf\xC3\xA9 \xFF", true, 16);
  try {
    t.decode(ids);
  } catch (const bt::Error&) {
    // framing ids may point outside the vocabulary of a hostile file
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string json = tmp_file("tokenizer.json", data, size);
  try {
    exercise(bt::text::Tokenizer::from_tokenizer_json(json));
  } catch (const bt::Error&) {
  }
  // Same bytes split in two: vocab.json before the first NUL, merges.txt after it.
  size_t cut = 0;
  while (cut < size && data[cut] != 0) ++cut;
  std::string vocab = tmp_file("vocab.json", data, cut);
  std::string merges = tmp_file("merges.txt", data + std::min(cut + 1, size), size - std::min(cut + 1, size));
  try {
    exercise(bt::text::Tokenizer::from_files(vocab, merges));
  } catch (const bt::Error&) {
  }
  return 0;
}

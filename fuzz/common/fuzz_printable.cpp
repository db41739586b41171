// libFuzzer target for common/terminal.h: whatever the bytes, printable() returns no control byte (C0, DEL,
// C1) and only valid UTF-8, and leaves printable ASCII alone.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/terminal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string out = bt::printable(in);
  for (size_t i = 0; i < out.size();) {
    const unsigned char c = static_cast<unsigned char>(out[i]);
    if (c < 0x20 || c == 0x7f) std::abort();
    if (c < 0x80) {
      ++i;
      continue;
    }
    const size_t n = bt::utf8_sequence_length(out, i);
    if (n == 0) std::abort();
    if (n == 2 && c == 0xC2 && static_cast<unsigned char>(out[i + 1]) < 0xA0) std::abort();  // C1
    i += n;
  }
  bool ascii = true;
  for (unsigned char c : in) ascii &= c >= 0x20 && c < 0x7f;
  if (ascii && out != in) std::abort();
  return 0;
}

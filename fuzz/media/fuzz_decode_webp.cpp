// libFuzzer target for the WEBP decoder (media/decode_webp.cpp) behind media/decode.h: fuzz_format.h.
#include "fuzz_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz_format(data, size, bt::media::ImageFormat::kWebp);
}

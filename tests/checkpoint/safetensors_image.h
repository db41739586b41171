// The safetensors tests' file images: 8-byte little-endian header length, the JSON header, then data_bytes of
// payload; and the bt::Error message parsing one gives ("" when it parses), naming it `name` (the tests in this
// folder include it as "safetensors_image.h").
#pragma once
#include <cstdint>
#include <string>

#include "checkpoint/safetensors.h"
#include "common/error.h"

namespace bt::test {

inline std::string safetensors_image(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + std::string(data_bytes, '\x01');
}

inline std::string safetensors_parse_error(const std::string& bytes, const char* name) {
  try {
    checkpoint::SafeTensors::parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name);
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace bt::test

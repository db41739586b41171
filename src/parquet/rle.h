// Parquet's RLE / bit-packed hybrid encoding (definition levels, dictionary indices, RLE booleans).
// Bounds-checked: running out of data before `count` values throws bt::Error.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bt::parquet {

class RleDecoder {
 public:
  // bit_width must be 0..32 (checked).
  RleDecoder(const uint8_t* data, size_t size, int bit_width);
  // Decodes the next `count` values into out.
  void decode(uint32_t* out, size_t count);

 private:
  bool next_run();
  const uint8_t* p_;
  const uint8_t* end_;
  int bit_width_;
  // Current run: either `rle_left` copies of rle_value, or bit-packed values starting at bit `bit_pos_`.
  size_t rle_left_ = 0;
  uint32_t rle_value_ = 0;
  size_t packed_left_ = 0;
  const uint8_t* packed_ = nullptr;
  uint64_t bit_pos_ = 0;
};

// Bit width needed for values 0..max_value.
inline int bit_width_for(uint32_t max_value) {
  int w = 0;
  while (w < 32 && (max_value >> w) != 0) ++w;
  return w;
}

}  // namespace bt::parquet

#include "parquet/rle.h"

#include <algorithm>

#include "common/error.h"

namespace bt::parquet {

RleDecoder::RleDecoder(const uint8_t* data, size_t size, int bit_width)
    : p_(data), end_(data + size), bit_width_(bit_width) {
  if (bit_width < 0 || bit_width > 32) fail("RLE bit width ", bit_width, " is outside 0..32");
}

bool RleDecoder::next_run() {
  if (p_ >= end_) return false;
  uint64_t header = 0;
  for (int shift = 0;; shift += 7) {
    if (p_ >= end_ || shift > 28) fail("RLE: bad run header");
    uint8_t b = *p_++;
    header |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  if (header & 1) {
    // Bit-packed: (header >> 1) groups of 8 values. Writers may truncate the final group's padding bytes, so
    // only the values that the remaining bytes hold are usable.
    uint64_t groups = header >> 1;
    uint64_t want_bytes = groups * static_cast<uint64_t>(bit_width_);
    uint64_t have = std::min<uint64_t>(want_bytes, static_cast<uint64_t>(end_ - p_));
    packed_ = p_;
    bit_pos_ = 0;
    packed_left_ = bit_width_ == 0 ? groups * 8 : static_cast<size_t>(have * 8 / bit_width_);
    p_ += have;
  } else {
    int nbytes = (bit_width_ + 7) / 8;
    if (end_ - p_ < nbytes) fail("RLE: truncated run value");
    uint32_t v = 0;
    for (int i = 0; i < nbytes; ++i) v |= static_cast<uint32_t>(p_[i]) << (8 * i);
    p_ += nbytes;
    rle_value_ = v;
    rle_left_ = static_cast<size_t>(header >> 1);
  }
  return true;
}

void RleDecoder::decode(uint32_t* out, size_t count) {
  const uint64_t mask = bit_width_ == 32 ? 0xffffffffull : ((1ull << bit_width_) - 1);
  while (count > 0) {
    if (rle_left_ > 0) {
      size_t n = std::min(rle_left_, count);
      std::fill(out, out + n, rle_value_);
      out += n;
      count -= n;
      rle_left_ -= n;
    } else if (packed_left_ > 0) {
      size_t n = std::min(packed_left_, count);
      for (size_t i = 0; i < n; ++i) {
        uint64_t v = 0;
        if (bit_width_) {
          // Gather the bytes covering this value; all of them lie inside the run (checked in next_run).
          uint64_t byte = bit_pos_ >> 3;
          int shift = static_cast<int>(bit_pos_ & 7);
          int need = (shift + bit_width_ + 7) / 8;
          for (int k = 0; k < need; ++k) v |= static_cast<uint64_t>(packed_[byte + k]) << (8 * k);
          v = (v >> shift) & mask;
          bit_pos_ += static_cast<uint64_t>(bit_width_);
        }
        out[i] = static_cast<uint32_t>(v);
      }
      out += n;
      count -= n;
      packed_left_ -= n;
    } else if (!next_run()) {
      fail("RLE: data ends ", count, " values early");
    }
  }
}

}  // namespace bt::parquet

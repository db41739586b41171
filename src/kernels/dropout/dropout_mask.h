// The CPU dropout's mask (kernels/dropout/dropout.h), shared by every kernel that drops elements (dropout.cpp, the
// fused attention probabilities): element i of a contiguous tensor is kept under seed s iff element_hash(i, s) is at
// least drop_threshold(p). Kernels that apply the same seed to the same element indices drop the same elements.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace bt::kernels {

// murmur3's 32-bit finalizer: a bijection that mixes every input bit into every output bit.
inline uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

// Element i's hash under seed (s1, s2) = (seed_low, seed_high): two rounds with the seed's halves between them, so the masks of two
// seeds are not shifted copies of each other (one round of fmix32(i + s) would be). 32-bit lanes: vectorizes.
inline uint32_t element_hash(uint32_t i, uint32_t s1, uint32_t s2) { return fmix32(fmix32(i ^ s1) + s2); }

// Kept when the hash is at least the threshold: probability 1 - threshold / 2^32.
inline uint32_t drop_threshold(double p) {
  return static_cast<uint32_t>(std::min(std::ldexp(p, 32), 4294967295.0));
}

// The seed's two halves, as element_hash takes them.
inline uint32_t seed_low(uint64_t seed) { return static_cast<uint32_t>(seed); }
inline uint32_t seed_high(uint64_t seed) { return static_cast<uint32_t>(seed >> 32); }

}  // namespace bt::kernels

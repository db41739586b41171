// NumPy .npy (format version 1.0) writers, so transform outputs can be checked with numpy.load().
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bt::media {

// shape is C-order; data holds prod(shape) elements. Throws bt::Error naming the path on I/O failure.
void write_npy_u8(const std::string& path, const uint8_t* data, const std::vector<int64_t>& shape);
void write_npy_f32(const std::string& path, const float* data, const std::vector<int64_t>& shape);

// The bytes of a .npy file (header + data), for tests and in-memory use. dtype: "|u1" or "<f4".
std::string npy_bytes(const void* data, size_t elem_size, const char* dtype, const std::vector<int64_t>& shape);

}  // namespace bt::media

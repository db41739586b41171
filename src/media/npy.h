// NumPy .npy (format version 1.0) writers, so transform outputs can be checked with numpy.load().
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bt::media {

// shape is C-order; data holds prod(shape) elements. Throws bt::Error naming the path on I/O failure.
void write_npy_u8(const std::string& path, const uint8_t* data, const std::vector<int64_t>& shape);
void write_npy_f32(const std::string& path, const float* data, const std::vector<int64_t>& shape);

// The bytes of a .npy file (header + data), for tests and in-memory use. dtype: "|u1" or "<f4".
std::string npy_bytes(const void* data, size_t elem_size, const char* dtype, const std::vector<int64_t>& shape);

// A 2-D little-endian float32 C-order .npy (what `bridgetune encode` writes), checked against its bytes: version
// 1.x-3.x, descr '<f4', fortran_order False, shape (rows, cols) whose data is exactly the rest of the file.
// Throws bt::Error "NAME: why" otherwise (the header is never quoted).
struct NpyMatrix {
  int64_t rows = 0, cols = 0;
  size_t data_offset = 0;  // where rows * cols floats start in the bytes
};
NpyMatrix parse_npy_f32_matrix(std::span<const uint8_t> bytes, const std::string& name);

}  // namespace bt::media

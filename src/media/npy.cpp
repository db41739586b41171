#include "media/npy.h"

#include <bit>
#include <cstring>
#include <fstream>

#include "common/error.h"

namespace bt::media {

std::string npy_bytes(const void* data, size_t elem_size, const char* dtype, const std::vector<int64_t>& shape) {
  static_assert(std::endian::native == std::endian::little, "the .npy writer assumes a little-endian host");
  std::string dims;
  size_t count = 1;
  for (int64_t d : shape) {
    if (!dims.empty()) dims += ", ";
    dims += std::to_string(d);
    count *= static_cast<size_t>(d);
  }
  if (shape.size() == 1) dims += ",";  // numpy's own spelling: (3,) and (3, 4)
  std::string header = "{'descr': '" + std::string(dtype) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + header length (2) + header + '\n' must be a multiple of 64.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  out += header;
  out.append(static_cast<const char*>(data), count * elem_size);
  return out;
}

static void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail(path, ": cannot open for writing");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) fail(path, ": write failed");
}

void write_npy_u8(const std::string& path, const uint8_t* data, const std::vector<int64_t>& shape) {
  write_file(path, npy_bytes(data, 1, "|u1", shape));
}

void write_npy_f32(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  write_file(path, npy_bytes(data, 4, "<f4", shape));
}

}  // namespace bt::media

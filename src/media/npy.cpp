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

namespace {

// The integer after `key` in the header dict ("'shape': (12, 512)" -> the list), or why not.
bool parse_shape(const std::string& h, int64_t* rows, int64_t* cols) {
  const size_t k = h.find("'shape':");
  if (k == std::string::npos) return false;
  const size_t open = h.find('(', k), close = h.find(')', k);
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  int64_t dims[2] = {0, 0};
  int n = 0;
  size_t i = open + 1;
  while (i < close) {
    while (i < close && (h[i] == ' ' || h[i] == ',')) ++i;
    if (i == close) break;
    if (n == 2 || h[i] < '0' || h[i] > '9') return false;
    int64_t v = 0;
    for (; i < close && h[i] >= '0' && h[i] <= '9'; ++i) {
      if (v > (int64_t(1) << 40)) return false;
      v = v * 10 + (h[i] - '0');
    }
    dims[n++] = v;
  }
  if (n != 2) return false;
  *rows = dims[0], *cols = dims[1];
  return true;
}

}  // namespace

NpyMatrix parse_npy_f32_matrix(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) fail(name, ": not a .npy file");
  const int major = bytes[6];
  if (major < 1 || major > 3) fail(name, ": .npy version ", major, " is not supported (1-3 are)");
  const size_t len_bytes = major == 1 ? 2 : 4, start = 8 + len_bytes;
  if (bytes.size() < start) fail(name, ": cut short in its header");
  uint64_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) header_len |= uint64_t(bytes[8 + i]) << (8 * i);
  if (header_len > bytes.size() - start) fail(name, ": its header runs past the end of the file");
  const std::string h(reinterpret_cast<const char*>(bytes.data() + start), size_t(header_len));
  if (h.find("'descr': '<f4'") == std::string::npos) fail(name, ": not float32 little-endian ('<f4') data");
  if (h.find("'fortran_order': False") == std::string::npos) fail(name, ": not C-order data");
  NpyMatrix m;
  if (!parse_shape(h, &m.rows, &m.cols)) fail(name, ": its shape is not (rows, cols)");
  m.data_offset = start + size_t(header_len);
  const unsigned __int128 want = (unsigned __int128)uint64_t(m.rows) * uint64_t(m.cols) * 4;  // no overflow
  if (want != bytes.size() - m.data_offset)
    fail(name, ": the shape (", m.rows, ", ", m.cols, ") does not match the ", bytes.size() - m.data_offset,
         " bytes of data in the file");
  return m;
}

}  // namespace bt::media

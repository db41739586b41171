#include "media/jpeg_frame.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "common/error.h"

namespace bt::media {
namespace {

bool is_sof(int marker) {
  // C0..CF are SOFn except DHT (C4), JPG (C8) and DAC (CC).
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

bool is_standalone(int marker) { return marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8); }

int be16(const uint8_t* p) { return (p[0] << 8) | p[1]; }

std::string marker_name(int marker) {
  static const char* kHex = "0123456789ABCDEF";
  return std::string("0xFF") + kHex[marker >> 4] + kHex[marker & 15];
}

void read_sof(int marker, const uint8_t* seg, size_t len, JpegFrame& f) {
  if (len < 6) fail("JPEG frame header (SOF) too short");
  f.sof = marker - 0xC0;
  f.precision = seg[0];
  f.height = be16(seg + 1);
  f.width = be16(seg + 3);
  f.num_components = seg[5];
  if (f.num_components < 1 || f.num_components > 4)
    fail("JPEG frame header has ", f.num_components, " components (1..4 are supported)");
  if (len < 6 + 3 * static_cast<size_t>(f.num_components)) fail("JPEG frame header (SOF) too short");
  for (int c = 0; c < f.num_components; ++c) {
    const uint8_t* p = seg + 6 + 3 * c;
    f.components[c] = JpegComponent{p[0], p[1] >> 4, p[1] & 15};
  }
}

bool ends_with_eoi(std::span<const uint8_t> b) {
  size_t k = b.size();
  while (k > 0 && b[k - 1] == 0) --k;  // some writers pad the file with zeros after EOI
  return k >= 4 && b[k - 2] == 0xFF && b[k - 1] == 0xD9;
}

// After the SOF at `pos`: the component count of the first SOS, 0 if a malformed segment or the end comes first.
int first_scan_components(std::span<const uint8_t> b, size_t pos, bool& extraneous) {
  const size_t n = b.size();
  for (;;) {
    const size_t start = pos;
    while (pos < n && b[pos] != 0xFF) ++pos;
    extraneous |= pos > start;
    while (pos < n && b[pos] == 0xFF) ++pos;
    if (pos >= n) return 0;
    const int marker = b[pos++];
    if (is_standalone(marker)) continue;
    if (marker == 0xD9 || pos + 2 > n) return 0;
    const size_t len = static_cast<size_t>(be16(b.data() + pos));
    if (len < 3 || pos + len > n) return 0;
    if (marker == 0xDA) return b[pos + 2];
    pos += len;
  }
}

}  // namespace

uint64_t jpeg_coefficient_bytes(const JpegFrame& f) {
  const bool progressive = f.sof == 2 || f.sof == 6 || f.sof == 10 || f.sof == 14;
  const bool one_scan = f.scan_components == 0 || f.scan_components >= f.num_components;
  if (!progressive && one_scan) return 0;
  int hmax = 1, vmax = 1;
  for (int c = 0; c < f.num_components; ++c) {
    hmax = std::max(hmax, f.components[c].h);
    vmax = std::max(vmax, f.components[c].v);
  }
  uint64_t blocks = 0;
  for (int c = 0; c < f.num_components; ++c) {
    const uint64_t h = std::max(1, f.components[c].h), v = std::max(1, f.components[c].v);
    const uint64_t bw = (uint64_t(f.width) * h + 8 * hmax - 1) / (8 * hmax);
    const uint64_t bh = (uint64_t(f.height) * v + 8 * vmax - 1) / (8 * vmax);
    blocks += (bw + h - 1) / h * h * ((bh + v - 1) / v * v);
  }
  return blocks * 128;  // 64 coefficients of 2 bytes
}

JpegFrame read_jpeg_frame(std::span<const uint8_t> b) {
  const size_t n = b.size();
  if (n < 4 || b[0] != 0xFF || b[1] != 0xD8) fail("not a JPEG (no SOI marker)");
  JpegFrame f;
  f.ends_with_eoi = ends_with_eoi(b);
  size_t pos = 2;
  for (;;) {
    const size_t start = pos;
    while (pos < n && b[pos] != 0xFF) ++pos;  // extraneous bytes before a marker (libjpeg warns, continues)
    f.extraneous |= pos > start;
    while (pos < n && b[pos] == 0xFF) ++pos;  // fill bytes
    if (pos >= n) fail("JPEG has no frame header (SOF) before the end of the data");
    const int marker = b[pos++];
    if (is_standalone(marker)) continue;
    if (marker == 0xD9 || marker == 0xDA) fail("JPEG has no frame header (SOF) before its scan data");
    if (pos + 2 > n) fail("JPEG marker segment ", marker_name(marker), " is cut short");
    const size_t len = static_cast<size_t>(be16(b.data() + pos));
    if (len < 2 || pos + len > n) fail("JPEG marker segment ", marker_name(marker), " runs past the end of the data");
    const uint8_t* seg = b.data() + pos + 2;
    const size_t seg_len = len - 2;
    if (marker == 0xEE && seg_len >= 12 && std::memcmp(seg, "Adobe", 5) == 0) f.adobe_transform = seg[11];
    if (is_sof(marker)) {
      read_sof(marker, seg, seg_len, f);
      f.scan_components = first_scan_components(b, pos + len, f.extraneous);
      return f;
    }
    pos += len;
  }
}

std::vector<uint8_t> without_extraneous_header_bytes(std::span<const uint8_t> b) {
  const size_t n = b.size();
  if (n < 4 || b[0] != 0xFF || b[1] != 0xD8) return {};
  std::vector<uint8_t> out(b.begin(), b.begin() + 2);
  out.reserve(n);
  bool dropped = false;
  for (size_t pos = 2;;) {
    const size_t start = pos;
    while (pos < n && b[pos] != 0xFF) ++pos;
    dropped |= pos > start;
    const size_t marker_at = pos;
    while (pos < n && b[pos] == 0xFF) ++pos;
    if (pos >= n) return {};
    const int marker = b[pos++];
    size_t end = pos;  // the segment's end: a standalone marker has none
    if (!is_standalone(marker) && marker != 0xD9) {
      if (pos + 2 > n) return {};
      const size_t len = static_cast<size_t>(be16(b.data() + pos));
      if (len < 2 || pos + len > n) return {};
      end = pos + len;
    }
    if (marker == 0xDA || marker == 0xD9) end = n;  // the scans (and anything after) as they are
    out.insert(out.end(), b.begin() + marker_at, b.begin() + end);
    if (end == n) break;
    pos = end;
  }
  if (!dropped) return {};
  return out;
}

}  // namespace bt::media

#include "text/utf8.h"

namespace bt::text {
namespace {

// Length of the well-formed sequence starting at s[i], or 0 when ill-formed; `sub` gets the length of the
// maximal subpart (the longest prefix that could start a valid sequence, >= 1) for the replacement rule.
size_t valid_seq(const unsigned char* s, size_t n, size_t i, size_t& sub) {
  unsigned char c = s[i];
  sub = 1;
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= n) return 0;
    unsigned char b = s[i + k];
    unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return 0;
    sub = k + 1;
  }
  return len;
}

}  // namespace

bool is_valid_utf8(std::string_view sv) {
  auto* s = reinterpret_cast<const unsigned char*>(sv.data());
  size_t n = sv.size(), i = 0, sub;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      __builtin_memcpy(&w, s + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    size_t len = valid_seq(s, n, i, sub);
    if (!len) return false;
    i += len;
  }
  return true;
}

std::string sanitize_utf8(std::string_view sv) {
  if (is_valid_utf8(sv)) return std::string(sv);
  auto* s = reinterpret_cast<const unsigned char*>(sv.data());
  size_t n = sv.size(), i = 0, sub;
  std::string out;
  out.reserve(n + 8);
  while (i < n) {
    size_t len = valid_seq(s, n, i, sub);
    if (len) {
      out.append(sv.data() + i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      i += sub;  // a truncated prefix of a valid sequence counts as one error
    }
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

const std::array<uint32_t, 256>& byte_to_cp() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? b : next++;
    }
    return t;
  }();
  return table;
}

bool unicode_to_bytes(std::string_view token, std::string& out) {
  // The alphabet spans U+0021..U+0143; invert it with a direct table.
  static const std::array<int16_t, 0x144> inverse = [] {
    std::array<int16_t, 0x144> inv;
    inv.fill(-1);
    for (int b = 0; b < 256; ++b) inv[byte_to_cp()[b]] = int16_t(b);
    return inv;
  }();
  out.clear();
  auto* s = reinterpret_cast<const unsigned char*>(token.data());
  size_t n = token.size(), i = 0, sub;
  while (i < n) {
    size_t len = valid_seq(s, n, i, sub);
    if (!len) return false;
    uint32_t cp;
    if (len == 1) cp = s[i];
    else if (len == 2) cp = ((s[i] & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
    else return false;  // everything in the alphabet is at most 2 bytes of UTF-8
    if (cp >= inverse.size() || inverse[cp] < 0) return false;
    out += char(inverse[cp]);
    i += len;
  }
  return true;
}

std::string bytes_to_unicode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) append_utf8(out, byte_to_cp()[b]);
  return out;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s.substr(0, 200)) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == 0x7F) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  if (s.size() > 200) out += "...";
  return out + "\"";
}

}  // namespace bt::text

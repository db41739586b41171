// Terminal safety: text that may carry names or bytes from untrusted input (file names, captions, tar member
// names, error messages quoting them) is passed through printable() before it reaches a terminal, so escape
// sequences (ESC [ ...), BEL, other C0/C1 controls and invalid UTF-8 (0xFF) cannot move the cursor, retitle
// the window or corrupt the display.
//
// Contract: valid UTF-8 printable text is returned unchanged (é, 日本 stay as they are). Every C0 control
// byte (including tab and newline: messages are one line), DEL, every C1 control (U+0080..U+009F) and every
// byte of an invalid UTF-8 sequence becomes \xNN; a literal backslash stays a backslash.
#pragma once
#include <algorithm>
#include <string>
#include <string_view>

namespace bt {

// Length of the valid UTF-8 sequence starting at s[i] (2..4), or 0 when s[i] does not start one.
inline size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && b(i + 1) < 0xA0) return 0;  // overlong
  if (c == 0xED && b(i + 1) > 0x9F) return 0;  // surrogates
  if (c == 0xF0 && b(i + 1) < 0x90) return 0;  // overlong
  if (c == 0xF4 && b(i + 1) > 0x8F) return 0;  // > U+10FFFF
  return n;
}

inline std::string printable(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  auto escape = [&](unsigned char c) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) escape(c);
      else out += char(c);
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(s, i);
    // C1 controls are U+0080..U+009F, encoded C2 80..C2 9F (0x9B alone is CSI on some terminals).
    if (n == 0 || (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0)) {
      for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) escape(static_cast<unsigned char>(s[i + k]));
      i += std::max<size_t>(n, 1);
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

// A name taken from a file (a tar member, a sample key) as an error quotes it: at most `max` bytes, then "...",
// so a 500 KB member name cannot become a 1 MB error line (main escapes control bytes when it prints).
inline std::string clip_name(std::string_view s, size_t max = 200) {
  return s.size() <= max ? std::string(s) : std::string(s.substr(0, max)) + "...";
}

// What `bridgetune` prints after "error: " for any exception: its first line only (libtorch appends its C++
// backtrace on the next lines), control bytes escaped, at most `max` bytes: one short line, whatever threw.
inline std::string error_line(std::string_view what, size_t max = 2000) {
  std::string first = printable(what.substr(0, what.find('\n')));
  if (first.size() > max) first = first.substr(0, max) + "...";
  return first;
}

}  // namespace bt

// UTF-8 helpers for the tokenizer: validation with replacement and GPT-2's byte <-> unicode alphabet.
// sanitize_utf8 replaces every ill-formed sequence with U+FFFD using the "maximal subpart" rule (Unicode §3.9,
// the same output as Python's bytes.decode("utf-8", errors="replace") and WHATWG TextDecoder).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace bt::text {

// True when `s` is well-formed UTF-8 (no surrogates, no overlongs, <= U+10FFFF).
bool is_valid_utf8(std::string_view s);

// `s` with each maximal ill-formed subpart replaced by U+FFFD (EF BF BD). Returns `s` unchanged when valid.
std::string sanitize_utf8(std::string_view s);

// Appends the UTF-8 encoding of code point `cp` (caller guarantees cp <= 0x10FFFF).
void append_utf8(std::string& out, uint32_t cp);

// GPT-2's bytes_to_unicode(): byte b is shown as code point byte_to_cp()[b] in vocab.json/merges.txt.
const std::array<uint32_t, 256>& byte_to_cp();

// Converts a vocab/merges string (GPT-2 alphabet) back to the raw bytes it stands for. Returns false when the
// string holds a code point outside the alphabet (e.g. an added token like "<mask>" is fine, "a b" is not).
bool unicode_to_bytes(std::string_view token, std::string& out);

// Raw bytes -> GPT-2 alphabet string (the inverse of unicode_to_bytes).
std::string bytes_to_unicode(std::string_view bytes);

// `s` in double quotes with control characters, quotes and backslashes escaped: for error messages.
std::string quote(std::string_view s);

}  // namespace bt::text

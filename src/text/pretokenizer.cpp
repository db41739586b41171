#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/pretokenizer.h"

#include <pcre2.h>

#include "common/error.h"

namespace bt::text {
namespace {

// Unicode White_Space (as Oniguruma's \s under Unicode): tab..CR, space, NEL, NBSP, Ogham, en quad..hair space,
// line/paragraph separators, narrow NBSP, medium math space, ideographic space.
#define BT_WS "\\t-\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
constexpr const char* kPattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" BT_WS "\\p{L}\\p{N}]+|[" BT_WS "]+(?![^" BT_WS "])|[" BT_WS
    "]+";
#undef BT_WS

}  // namespace

PreTokenizer::PreTokenizer() {
  int err = 0;
  PCRE2_SIZE off = 0;
  auto* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED,
                             PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &err, &off, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    fail("tokenizer: cannot compile the pre-tokenizer pattern at offset ", off, ": ", reinterpret_cast<char*>(msg));
  }
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  code_ = code;
}

PreTokenizer::~PreTokenizer() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

PreTokenizer::Matcher::Matcher(const PreTokenizer& p)
    : p_(p), md_(pcre2_match_data_create_from_pattern(static_cast<pcre2_code*>(p.code_), nullptr)) {
  if (!md_) throw std::bad_alloc();
}

PreTokenizer::Matcher::~Matcher() { pcre2_match_data_free(static_cast<pcre2_match_data*>(md_)); }

size_t PreTokenizer::Matcher::next(std::string_view text, size_t pos) {
  auto* code = static_cast<pcre2_code*>(p_.code_);
  auto* md = static_cast<pcre2_match_data*>(md_);
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  // The alternatives cover every code point, so a match always starts at `pos` (JIT cannot anchor at match
  // time); a gap would become a piece of its own.
  int rc = p_.jit_ ? pcre2_jit_match(code, subject, text.size(), pos, 0, md, nullptr)
                   : pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
  if (rc > 0) {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    if (ov[0] > pos) return ov[0];
    if (ov[1] > pos) return ov[1];
  }
  // Unreachable for valid UTF-8; never loop forever: emit one code point.
  size_t end = pos + 1;
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  return end;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> out;
  split(text, [&](std::string_view p) {
    out.push_back(p);
    return true;
  });
  return out;
}

const PreTokenizer& gpt2_pretokenizer() {
  static const PreTokenizer instance;
  return instance;
}

}  // namespace bt::text

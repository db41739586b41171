// Tiny embedded bitmap font for text in PNG plots (no font files needed at run time).
#pragma once

namespace bt::report {
constexpr int kGlyphW = 5, kGlyphH = 7;
// 7 rows of 5 bits (bit 4 = leftmost pixel); characters outside ASCII 32..126 draw as '?'.
const unsigned char* glyph5x7(char c);
// Rows to shift a glyph down (descenders); a line of text is kGlyphH + 2 rows tall.
int glyph_drop(char c);
}  // namespace bt::report

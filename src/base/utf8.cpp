#include "base/utf8.h"

#include <cstddef>
#include <cstdint>

namespace mvr {

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra;
    uint32_t code;
    if (c >= 0xc2 && c <= 0xdf) {
      extra = 1;
      code = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2;
      code = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3;
      code = c & 0x07;
    } else {
      return false;  // a continuation byte first, an overlong lead (c0, c1) or past f4
    }
    if (i + extra >= text.size()) return false;  // truncated sequence
    for (size_t k = 1; k <= extra; ++k) {
      const unsigned char cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      code = (code << 6) | (cc & 0x3f);
    }
    const uint32_t min = extra == 1 ? 0x80 : extra == 2 ? 0x800 : 0x10000;
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += extra + 1;
  }
  return true;
}

std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  // A character is at most 4 bytes: look back over at most 3 continuation bytes for its lead.
  size_t cut = max_bytes;
  for (int back = 0; back < 3 && cut > 0 && (byte(cut) & 0xc0) == 0x80; ++back) --cut;
  const bool splits_a_character = cut < max_bytes && byte(cut) >= 0xc0;
  return text.substr(0, splits_a_character ? cut : max_bytes);
}

}  // namespace mvr

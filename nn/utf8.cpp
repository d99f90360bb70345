// utf8.cpp: see utf8.h.
#include "nn/utf8.h"

#include <ios>

#include "tensor/error.h"

namespace qkv::nn {

size_t utf8_char(const std::string& text, size_t i, char32_t* code_point) {
  if (i >= text.size()) return 0;
  const auto b = static_cast<unsigned char>(text[i]);
  // The lead byte says how many bytes follow: 0xxxxxxx, 110xxxxx, 1110xxxx, 11110xxx.
  const int extra = b < 0x80           ? 0
                    : (b >> 5) == 0x6  ? 1
                    : (b >> 4) == 0xE  ? 2
                    : (b >> 3) == 0x1E ? 3
                                       : -1;
  if (extra < 0 || i + static_cast<size_t>(extra) >= text.size()) return 0;
  char32_t cp = extra == 0 ? b : (b & (0x3F >> extra));
  for (int k = 1; k <= extra; ++k) {
    const auto c = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
    if ((c >> 6) != 0x2) return 0;  // not a continuation byte
    cp = (cp << 6) | (c & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8 either.
  static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (code_point) *code_point = cp;
  return static_cast<size_t>(extra) + 1;
}

std::vector<char32_t> decode_utf8(const std::string& text) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const size_t n = utf8_char(text, i, &cp);
    check(n > 0, "decode_utf8", "valid UTF-8, got a bad byte 0x", std::hex,
          static_cast<int>(static_cast<unsigned char>(text[i])), std::dec, " at offset ", i);
    out.push_back(cp);
    i += n;
  }
  return out;
}

std::string encode_utf8(const std::vector<char32_t>& cps) {
  std::string out;
  for (char32_t cp : cps) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

}  // namespace qkv::nn

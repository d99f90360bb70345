// utf8.cpp: see utf8.h.
#include "nn/utf8.h"

#include <ios>

#include "tensor/error.h"

namespace qkv::nn {

std::vector<char32_t> decode_utf8(const std::string& text) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  for (size_t i = 0; i < text.size();) {
    const unsigned char b = byte(i);
    // The lead byte says how many bytes follow: 0xxxxxxx, 110xxxxx, 1110xxxx, 11110xxx.
    const int extra = b < 0x80           ? 0
                      : (b >> 5) == 0x6  ? 1
                      : (b >> 4) == 0xE  ? 2
                      : (b >> 3) == 0x1E ? 3
                                         : -1;
    check(extra >= 0 && i + static_cast<size_t>(extra) < text.size(), "decode_utf8",
          "valid UTF-8, got a bad byte 0x", std::hex, static_cast<int>(b), std::dec, " at offset ",
          i);
    char32_t cp = extra == 0 ? b : (b & (0x3F >> extra));
    for (int k = 1; k <= extra; ++k) {
      const unsigned char c = byte(i + static_cast<size_t>(k));
      check((c >> 6) == 0x2, "decode_utf8", "valid UTF-8, got a bad continuation byte at offset ",
            i + static_cast<size_t>(k));
      cp = (cp << 6) | (c & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8 either.
    static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    check(cp >= kMin[extra] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF), "decode_utf8",
          "valid UTF-8, got an invalid code point at offset ", i);
    out.push_back(cp);
    i += static_cast<size_t>(extra) + 1;
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

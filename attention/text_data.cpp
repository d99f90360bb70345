// text_data.cpp: see text_data.h.
#include "attention/text_data.h"

#include <algorithm>
#include <map>

namespace qkv::attention {

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

CharTokenizer::CharTokenizer(const std::string& text) {
  chars_ = decode_utf8(text);
  std::sort(chars_.begin(), chars_.end());  // sorted(set(text)): by code point
  chars_.erase(std::unique(chars_.begin(), chars_.end()), chars_.end());
}

Tensor CharTokenizer::encode(const std::string& text) const {
  const std::vector<char32_t> cps = decode_utf8(text);
  std::vector<int64_t> ids;
  ids.reserve(cps.size());
  for (char32_t cp : cps) {
    const auto it = std::lower_bound(chars_.begin(), chars_.end(), cp);
    check(it != chars_.end() && *it == cp, "CharTokenizer::encode",
          "characters of the vocabulary, got code point U+", std::hex, static_cast<uint32_t>(cp));
    ids.push_back(it - chars_.begin());
  }
  return from_vector(ids, {static_cast<int64_t>(ids.size())});
}

std::string CharTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::vector<char32_t> cps;
  for (int64_t id : ids) {
    check(id >= 0 && id < vocab_size(), "CharTokenizer::decode", "ids in [0, ", vocab_size(),
          "), got ", id);
    cps.push_back(chars_[static_cast<size_t>(id)]);
  }
  return encode_utf8(cps);
}

TextSplit split_90_10(const Tensor& ids) {
  check(ids.defined() && ids.dtype() == Dtype::int64 && ids.dim() == 1, "split_90_10",
        "int64 ids of shape (n,)");
  // n = int(0.9 * len(data)): a Python float product, truncated.
  const int64_t n = static_cast<int64_t>(0.9 * static_cast<double>(ids.size(0)));
  return {raw::contiguous(raw::narrow(ids, 0, 0, n)),
          raw::contiguous(raw::narrow(ids, 0, n, ids.size(0) - n))};
}

Batch get_batch(const Tensor& src, int64_t block, int64_t batch, Generator& gen) {
  check(src.size(0) >= block + 2, "get_batch", "at least block + 2 = ", block + 2,
        " tokens to draw from, got ", src.size(0));
  const Tensor ix = randint(src.size(0) - block - 1, {batch}, &gen);
  Tensor x = Tensor::empty({batch, block}, Dtype::int64),
         y = Tensor::empty({batch, block}, Dtype::int64);
  const int64_t* s = src.data_ptr<int64_t>();
  int64_t* px = x.data_ptr<int64_t>();
  int64_t* py = y.data_ptr<int64_t>();
  const auto starts = ix.to_vector<int64_t>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < block; ++t) {
      px[b * block + t] = s[starts[static_cast<size_t>(b)] + t];
      py[b * block + t] = s[starts[static_cast<size_t>(b)] + t + 1];
    }
  return {x, y};
}

}  // namespace qkv::attention

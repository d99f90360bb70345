// text_data.cpp: see text_data.h.
#include "attention/text_data.h"

#include <algorithm>
#include <map>

namespace qkv::attention {

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

// text_data.h: characters to token ids and back, the train/validation split, and the batches
// the tiny GPT trains on, drawn exactly as tools/tiny_gpt_twin.py draws them in PyTorch.
//
//   vocabulary: the distinct characters (Unicode code points, decoded from UTF-8) sorted by
//               code point: chars = sorted(set(text))
//   split:      the first int(0.9 * n) ids train, the rest validate
//   batch:      ix = randint(len(src) - block - 1, (batch,), generator=g)
//               x = stack(src[i : i + block]), y = stack(src[i + 1 : i + block + 1])
#pragma once

#include <string>
#include <vector>

#include "nn/all.h"

namespace qkv::attention {

using nn::decode_utf8;  // nn/utf8.h
using nn::encode_utf8;

class CharTokenizer {
 public:
  explicit CharTokenizer(const std::string& utf8_text);  // builds the vocabulary
  int64_t vocab_size() const { return static_cast<int64_t>(chars_.size()); }
  Tensor encode(const std::string& utf8_text) const;  // int64 (n,); unknown characters: an error
  std::string decode(const std::vector<int64_t>& ids) const;
  const std::vector<char32_t>& chars() const { return chars_; }
  // Every character once, in id order, as UTF-8: what a checkpoint keeps. A tokenizer built
  // from this text is this tokenizer again.
  std::string vocabulary() const { return encode_utf8(chars_); }

 private:
  std::vector<char32_t> chars_;  // sorted by code point: id i is chars_[i]
};

struct TextSplit {
  Tensor train, val;  // int64 (n_train,), (n_val,)
};
TextSplit split_90_10(const Tensor& ids);

struct Batch {
  Tensor x, y;  // int64 (batch, block): inputs and next-token targets
};
Batch get_batch(const Tensor& src, int64_t block, int64_t batch, Generator& gen);

}  // namespace qkv::attention

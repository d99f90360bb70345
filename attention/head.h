// head.h: one head of masked self-attention over a batch, as Andrej Karpathy writes it in
// "Let's build GPT": key, query and value are bias-free Linear layers (created in that order),
//
//   x (B, T, C) -> k, q, v (B, T, head_size)
//   wei = q @ k^T * head_size^-0.5, future masked to -inf, softmax    (B, T, T)
//   out = wei @ v                                                    (B, T, head_size)
// One matrix product scores every (query, key) pair of every sequence at once, and the mask
// makes row t depend only on tokens 0..t, so all T next-token predictions train in parallel.
#pragma once

#include "attention/core.h"

namespace qkv::attention {

class Head : public nn::UnaryModule {
 public:
  Head(int64_t n_embd, int64_t head_size, double dropout = 0.0, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<nn::Linear> key, query, value;
  int64_t head_size;
  double dropout;
  Tensor attention_weights;  // of the last forward, without history: (B, T, T)

 private:
  Generator* gen_;
};

}  // namespace qkv::attention

// embedding.h: Embedding, a lookup table: row `id` of a (num_embeddings, embedding_dim)
// weight for every id. ids (B, T) int64 -> (B, T, C). Initialised standard normal, as
// torch.nn.Embedding.
#pragma once

#include "nn/module.h"

namespace qkv::nn {

class Embedding : public UnaryModule {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, Generator* gen = nullptr);
  Tensor forward(const Tensor& ids) override;
  Tensor weight;
  int64_t num_embeddings, embedding_dim;
};

}  // namespace qkv::nn

// embedding.cpp: the lookup table (see embedding.h); its backward scatter-adds (ops_view.cpp).
#include "nn/embedding.h"

namespace qkv::nn {

Embedding::Embedding(int64_t n, int64_t d, Generator* gen) : num_embeddings(n), embedding_dim(d) {
  check(n > 0 && d > 0, "Embedding", "positive num_embeddings and embedding_dim, got ", n, " and ",
        d);
  weight = register_parameter("weight", randn({n, d}, gen));
}

Tensor Embedding::forward(const Tensor& ids) {
  return embedding(weight, ids);
}

}  // namespace qkv::nn

// join.h: putting tensors together and taking them apart: cat, stack, split, chunk, and
// gathering rows by index (index_select, and the embedding lookup built on it).
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace qkv::raw {

// cat: joins along an existing dim; every other size must agree. stack: along a new dim.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// split: views of `split_size` entries each along dim (the last may be smaller).
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim = 0);
// chunk: `chunks` views of equal size ceil(n / chunks) (the last may be smaller), as torch.
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);
// The split_size that chunk(a, chunks, dim) splits by (checked): chunk's rule in one place, for
// the autograd chunk too.
int64_t chunk_size(const Tensor& a, int64_t chunks, int64_t dim);
// index_select: out[..., i, ...] = a[..., index[i], ...] along dim; index is a 1-d int64 tensor.
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
// embedding: row `ids[...]` of weight (V, C) for every id: ids (B, T) -> (B, T, C).
Tensor embedding(const Tensor& weight, const Tensor& ids);

}  // namespace qkv::raw

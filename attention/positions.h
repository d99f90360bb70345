// positions.h: two ways to tell attention where tokens are without a learned position table.
//
// RoPE (rotary position embedding, Su et al. 2021; Llama, Qwen, Mistral): rotate each query and
// key by an angle proportional to its position. Pair the dims (x_i, x_{i + D/2}) for
// i < D/2 and turn the pair at position t by the angle t * theta_i, theta_i = base^(-2i / D):
//   x_i'       = x_i cos(t theta_i) - x_{i+D/2} sin(t theta_i)
//   x_{i+D/2}' = x_{i+D/2} cos(t theta_i) + x_i sin(t theta_i)
// A rotation keeps lengths, and the dot product of a query rotated by t_q with a key rotated
// by t_k depends only on t_q - t_k: scores see relative positions, at any length.
// (This is the "rotate half" pairing of GPT-NeoX and Hugging Face's Llama; the RoFormer paper
// pairs neighbours (x_2i, x_2i+1) instead, the same idea with the dims permuted.)
//
// ALiBi (Press et al. 2021; BLOOM, MPT): no rotation, just a penalty on the scores that grows
// with distance, steeper in some heads than others:
//   score(i, j) -= slope_h * |i - j|,   slope_h = 2^(-8 (h + 1) / H)  for H a power of two.
#pragma once

#include "nn/all.h"

namespace qkv::attention {

// x (..., T, D) with D even; row t of the last-but-one dim is at position offset + t.
// Differentiable (composed from narrow, mul and cat).
Tensor rope(const Tensor& x, int64_t offset = 0, double base = 10000.0);

// The ALiBi paper's slopes for H heads (for H not a power of two, its interpolation: the
// slopes of the nearest lower power of two, then every other slope of the next one).
std::vector<float> alibi_slopes(int64_t heads);

// (H, T_q, T_k): -slopes[h] * |i + (T_k - T_q) - j|, the bias the attention core adds to the
// scores (queries aligned to the end of the keys, as the core's causal mask is).
Tensor alibi_bias(const std::vector<float>& slopes, int64_t T_q, int64_t T_k);

}  // namespace qkv::attention

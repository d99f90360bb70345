// Exercise 15.1, after lesson 15: block_forward.
//
// One transformer block's forward (lesson 15; nanoGPT's Block, GPT-2's), pre-LayerNorm with
// two residual adds, x (B, T, C):
//   h   = x + attn(layer_norm(x, ln1_w, ln1_b))          attn is given: (B, T, C) -> (B, T, C)
//   out = h + mlp(layer_norm(h, ln2_w, ln2_b))
//   mlp(z) = gelu(z fc_w^T + fc_b) proj_w^T + proj_b      width 4C inside, exact GELU
// Each sublayer reads a normalised copy of the stream and adds its result to it; the stream
// itself (x, then h) is never normalised. Use qkv's ops (layer_norm, matmul, transpose, gelu):
// a model trains through the block.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 15.1
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor block_forward(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  // Write your code here, in place of the line below.
  not_implemented("15.1", "block_forward",
                  "x + attn(ln1(x)), then h + mlp(ln2(h)): pre-LayerNorm and two residual adds");
}

}  // namespace qkv::exercises

// Exercise 15.1 (block_forward), a reference solution. Try the exercise first:
// tutorials/exercises/learner/15_1_block_forward.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor block_forward(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  const Tensor h = x + attn(layer_norm(x, w.ln1_w, w.ln1_b));
  const Tensor z = layer_norm(h, w.ln2_w, w.ln2_b);
  const Tensor hidden = gelu(matmul(z, transpose(w.fc_w, 0, 1)) + w.fc_b);
  return h + matmul(hidden, transpose(w.proj_w, 0, 1)) + w.proj_b;
}

}  // namespace qkv::exercises::solution

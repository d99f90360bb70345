// Exercise 15.1 (block_forward): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// The block's MLP: fc, an activation, proj.
Tensor block_mlp(const Tensor& z, const BlockWeights& w, bool relu_not_gelu = false) {
  const Tensor pre = matmul(z, transpose(w.fc_w, 0, 1)) + w.fc_b;
  return matmul(relu_not_gelu ? relu(pre) : gelu(pre), transpose(w.proj_w, 0, 1)) + w.proj_b;
}

// Wrong: post-LayerNorm (the 2017 Transformer's order): normalises the stream after each add.
Tensor block_forward_post_layer_norm(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  const Tensor h = layer_norm(x + attn(x), w.ln1_w, w.ln1_b);
  return layer_norm(h + block_mlp(h, w), w.ln2_w, w.ln2_b);
}

// Wrong: forgets the MLP's residual add: out = mlp(ln2(h)).
Tensor block_forward_no_mlp_residual(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  const Tensor h = x + attn(layer_norm(x, w.ln1_w, w.ln1_b));
  return block_mlp(layer_norm(h, w.ln2_w, w.ln2_b), w);
}

// Wrong: adds the attention to the normalised x instead of x itself.
Tensor block_forward_residual_of_normalised(const Tensor& x, const BlockWeights& w,
                                            const Sublayer& attn) {
  const Tensor n = layer_norm(x, w.ln1_w, w.ln1_b);
  const Tensor h = n + attn(n);
  return h + block_mlp(layer_norm(h, w.ln2_w, w.ln2_b), w);
}

// Wrong: normalises before the MLP with ln1's weights (ln2 never used).
Tensor block_forward_ln1_for_both(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  const Tensor h = x + attn(layer_norm(x, w.ln1_w, w.ln1_b));
  return h + block_mlp(layer_norm(h, w.ln1_w, w.ln1_b), w);
}

// Wrong: ReLU in the MLP instead of GELU.
Tensor block_forward_relu(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  const Tensor h = x + attn(layer_norm(x, w.ln1_w, w.ln1_b));
  return h + block_mlp(layer_norm(h, w.ln2_w, w.ln2_b), w, /*relu_not_gelu=*/true);
}

// Wrong: both sublayers read x (the parallel block of GPT-J), where the MLP reads h.
Tensor block_forward_parallel(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  return x + attn(layer_norm(x, w.ln1_w, w.ln1_b)) + block_mlp(layer_norm(x, w.ln2_w, w.ln2_b), w);
}

// Wrong: runs the block batch element by batch element and stacks the results: stack() of none
// (an empty batch) is an error.
Tensor block_forward_per_batch(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  std::vector<Tensor> each;
  for (int64_t b = 0; b < x.size(0); ++b)
    each.push_back(select(solution::block_forward(narrow(x, 0, b, 1), w, attn), 0, 0));
  return stack(each, 0);
}

// Wrong: reads x's memory in order, as if it were contiguous (a transposed view is not).
Tensor block_forward_reads_memory(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  return solution::block_forward(memory_order(x), w, attn);
}

// Wrong: both residual adds start from the normalised stream (ln1(x), then ln2(h)).
Tensor block_forward_residuals_of_normalised(const Tensor& x, const BlockWeights& w,
                                             const Sublayer& attn) {
  const Tensor n1 = layer_norm(x, w.ln1_w, w.ln1_b);
  const Tensor h = n1 + attn(n1);
  const Tensor n2 = layer_norm(h, w.ln2_w, w.ln2_b);
  return n2 + block_mlp(n2, w);
}

// Wrong: GPT-2's tanh GELU in the MLP, where this block (nanoGPT's) uses the exact form.
Tensor block_forward_tanh_gelu(const Tensor& x, const BlockWeights& w, const Sublayer& attn) {
  const Tensor h = x + attn(layer_norm(x, w.ln1_w, w.ln1_b));
  const Tensor z = layer_norm(h, w.ln2_w, w.ln2_b);
  const Tensor hidden = gelu(matmul(z, transpose(w.fc_w, 0, 1)) + w.fc_b, GeluApproximation::tanh);
  return h + matmul(hidden, transpose(w.proj_w, 0, 1)) + w.proj_b;
}

const Catalogue<signature::block_forward>& block_forward_mistakes() {
  static const Catalogue<signature::block_forward> c = {
      {"block_forward_post_layer_norm", block_forward_post_layer_norm,
       "normalise what each sublayer reads, not the stream: the residual stream x, h is never "
       "normalised inside the block (pre-LayerNorm)",
       "h = x + attn(ln1(x)), out = h + mlp(ln2(h))"},
      {"block_forward_no_mlp_residual", block_forward_no_mlp_residual,
       "add the MLP's output to h: the second residual add is missing", "out = h + mlp(ln2(h))"},
      {"block_forward_residual_of_normalised", block_forward_residual_of_normalised,
       "add the attention's output to x itself, not to ln1(x): the stream carries x unchanged",
       "h = x + attn(ln1(x))"},
      {"block_forward_ln1_for_both", block_forward_ln1_for_both,
       "the MLP reads ln2(h), with ln2's weights: each sublayer has a LayerNorm of its own",
       "out = h + mlp(layer_norm(h, ln2_w, ln2_b))"},
      {"block_forward_relu", block_forward_relu,
       "the MLP's activation is GELU (exact form), not ReLU",
       "mlp(z) = gelu(z fc_w^T + fc_b) proj_w^T + proj_b"},
      {"block_forward_parallel", block_forward_parallel,
       "the MLP reads h, the stream after the attention's add, not x",
       "out = h + mlp(ln2(h)), h = x + attn(ln1(x))"},
      {"block_forward_per_batch", block_forward_per_batch,
       "run the whole batch at once: a loop over the batch has nothing to stack when the batch "
       "is empty",
       "out (B, T, C), for any B, 0 included"},
      {"block_forward_reads_memory", block_forward_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "x[i, j] is element (i, j) of x as a tensor, not of its memory"},
      {"block_forward_residuals_of_normalised", block_forward_residuals_of_normalised,
       "add each sublayer's output to the stream itself (x, then h), never to its normalised "
       "copy",
       "h = x + attn(ln1(x)), out = h + mlp(ln2(h))"},
      {"block_forward_tanh_gelu", block_forward_tanh_gelu,
       "this block's GELU is the exact form, gelu(z) (GPT-2 uses the tanh approximation)",
       "mlp(z) = gelu(z fc_w^T + fc_b) proj_w^T + proj_b, exact GELU"}};
  return c;
}

}  // namespace qkv::exercises::wrong

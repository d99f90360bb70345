// explorer.h: what the browser explorer (explorer.html) shows, computed by qkv itself and
// handed to the page as JSON. The same functions run natively (reference.cpp prints them, and
// the page's self-check holds its own numbers to those) and as WebAssembly (bindings.cpp).
//
// Every function returns a JSON object. Bad input (an empty text, a text longer than the
// context, characters outside the vocabulary, an unknown choice) is never an exception past
// this file: it is {"error": "one line that says what and why"}, which the page shows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace explorer {

// ---- Attention, step by step, forward and backward (lessons 04-13) ---------------------------
// The article's setting: words of `text` (commas removed, split on spaces), ids in sorted
// order, embedded by Embedding(50000, 3) drawn from seed 123; then manual_seed(seed) and
// W_query = rand(3, d_out_kq), W_key = rand(3, d_out_kq), W_value = rand(3, d_out_v), as
// lessons 06-13 draw them.
struct AttentionRequest {
  std::string text = "Life is short, eat dessert first";
  // "none"; "causal" (masked_fill with triu(ones, 1): the future hidden); "wrong" (lesson 12's
  // mistake: masked_fill given the "may see" mask, causal_mask(T), the lower triangle with its
  // diagonal: each word sees only the words after it, and the last one nothing).
  std::string mask = "causal";
  // "sum" (lesson 13: L = context.sum()); "target" (L = (context * R).sum(), R = rand(T, d_out_v)
  // drawn after W_value); "next_token" (logits = context @ W_out, W_out = rand(d_out_v, V) drawn
  // after W_value, V = T the number of ids, cross-entropy of each word's prediction of the
  // next one).
  std::string loss = "sum";
  int64_t seed = 123, d_out_kq = 2, d_out_v = 4;
};
// {"words", "sorted", "ids", "x", "W_query", "W_key", "W_value", "queries", "keys", "values",
// "scores",
//  "masked", "scaled", "weights", "context", "loss", "grad": {"context", "weights", "scores",
//  "W_query", "W_key", "W_value"}}: matrices as arrays of rows.
std::string attention_json(const AttentionRequest& request);

// ---- Many heads (lesson 10, and grouped-query heads of lesson 19) ----------------------------
// MultiHeadAttentionWrapper(3, d_out_kq, d_out_v, num_heads) drawn from seed (lesson 10), causal;
// with kv_heads < num_heads, the heads of a group of num_heads / kv_heads share the keys and
// values of the group's first head (grouped-query attention).
std::string heads_json(const std::string& text, int64_t num_heads, int64_t kv_heads,
                       int64_t seed = 123);

// ---- A tiny GPT that trains in the page (lesson 16) -------------------------------------------
// Lesson 16's default model on its built-in corpus, a causal run and a no-mask run from the same
// seed, stepped one training step at a time.
class Trainer {
 public:
  Trainer();
  ~Trainer();
  // run: "causal" or "no_mask". Each returns JSON.
  std::string step(const std::string& run);      // one AdamW step: {"step", "loss"}
  std::string evaluate(const std::string& run);  // {"step", "train", "val", "val_last"}
  // The same, one batch a call, so that the page never waits for a whole evaluation:
  // {"done": false, "batches"} until the last batch, then evaluate's answer, the same bits.
  // The run must not step in between.
  std::string evaluate_part(const std::string& run);
  std::string maps(const std::string& run);  // every head's weights on the first val chars
  std::string sample(const std::string& run, const std::string& prompt, int64_t n);
  std::string info() const;  // the model's sizes, the corpus's, lesson 16's settings
  // `steps` training steps of a fresh run of its own, timed: {"steps", "seconds"} (the speed
  // figure of bench/explorer_speed.sh, natively and in the page).
  static std::string time_steps(int64_t steps);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// ---- The self-check's cases ------------------------------------------------------------------
// The values the page's self-check computes again and compares: the attention view for each mask
// and loss, the heads, and the first training steps, evaluations and a sample of both runs.
std::string reference_json();

}  // namespace explorer

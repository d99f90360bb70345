// bindings.cpp: explorer.h's functions as the WebAssembly module's exports, called from the page
// (explorer.html) with Module.ccall. Each returns JSON in a buffer that stays valid until the
// next call (ccall copies it into a JavaScript string at once). The page is single-threaded:
// one call at a time.
#include <emscripten/emscripten.h>

#include <memory>
#include <string>

#include "tutorials/explorer/explorer.h"

namespace {
std::string reply;
std::unique_ptr<explorer::Trainer> trainer;

const char* answer(std::string json) {
  reply = std::move(json);
  return reply.c_str();
}

explorer::Trainer& the_trainer() {
  if (!trainer) trainer = std::make_unique<explorer::Trainer>();
  return *trainer;
}
}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE const char* qkv_attention(const char* text, const char* mask, const char* loss,
                                               int seed, int d_out_kq, int d_out_v) {
  return answer(explorer::attention_json({.text = text,
                                          .mask = mask,
                                          .loss = loss,
                                          .seed = seed,
                                          .d_out_kq = d_out_kq,
                                          .d_out_v = d_out_v}));
}

EMSCRIPTEN_KEEPALIVE const char* qkv_heads(const char* text, int num_heads, int kv_heads) {
  return answer(explorer::heads_json(text, num_heads, kv_heads));
}

// A new pair of runs (causal and no mask), from lesson 16's seed.
EMSCRIPTEN_KEEPALIVE const char* qkv_train_reset() {
  trainer = std::make_unique<explorer::Trainer>();
  return answer(trainer->info());
}
EMSCRIPTEN_KEEPALIVE const char* qkv_train_step(const char* run) {
  return answer(the_trainer().step(run));
}
EMSCRIPTEN_KEEPALIVE const char* qkv_train_evaluate(const char* run) {
  return answer(the_trainer().evaluate(run));
}
EMSCRIPTEN_KEEPALIVE const char* qkv_train_evaluate_part(const char* run) {
  return answer(the_trainer().evaluate_part(run));
}
EMSCRIPTEN_KEEPALIVE const char* qkv_train_maps(const char* run) {
  return answer(the_trainer().maps(run));
}
EMSCRIPTEN_KEEPALIVE const char* qkv_train_sample(const char* run, const char* prompt, int n) {
  return answer(the_trainer().sample(run, prompt, n));
}

EMSCRIPTEN_KEEPALIVE const char* qkv_reference() {
  return answer(explorer::reference_json());
}

EMSCRIPTEN_KEEPALIVE const char* qkv_time_steps(int steps) {
  return answer(explorer::Trainer::time_steps(steps));
}

}  // extern "C"

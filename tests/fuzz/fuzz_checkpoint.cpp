// fuzz_checkpoint.cpp: a training checkpoint from arbitrary bytes, restored into a run.
//
// The run is lesson 16's smallest: a GPT of vocabulary 27, C 4, one head, one block, context 4,
// with AdamW and a batch generator (the seeds in corpus/checkpoint are that lesson's files,
// tools/gen_fuzz_corpus.py). A checkpoint is all or nothing: any bytes must restore the whole
// run, or end in a qkv::Error with the run exactly as it was: every parameter, every moment of
// AdamW, its step count and learning rate, and the generator's state, compared byte for byte.
#include "tests/fuzz/fuzz_input.h"

namespace {
using namespace qkv;

// Everything a restore could change, as one string of bytes.
std::string run_state(const nn::Module& model, const nn::Optimizer& opt, const Generator& g) {
  char lr[32];
  std::snprintf(lr, sizeof lr, "%a", opt.lr());  // every bit of the double
  std::string s = g.state() + "|" + std::to_string(opt.steps()) + "|" + lr;
  const auto add = [&](const nn::NamedTensors& tensors) {
    for (const auto& [name, t] : tensors) {
      s += "|" + name + ":" + dtype_name(t.dtype()) + ":";
      if (t.dtype() == Dtype::float32) {
        const std::vector<float> v = t.to_vector<float>();
        s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
      } else if (t.dtype() == Dtype::int64) {
        const std::vector<int64_t> v = t.to_vector<int64_t>();
        s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
      }
    }
  };
  add(model.named_parameters());
  add(opt.state());
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qkv::attention;
  nn::Checkpoint checkpoint;
  try {
    checkpoint =
        nn::parse_checkpoint(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const Error&) {
    return 0;  // refused with a named error: the one allowed way out
  }
  manual_seed(7);
  GPT model(GPTConfig{.vocab_size = 27, .n_embd = 4, .n_head = 1, .n_layer = 1, .block = 4});
  nn::AdamW opt(model.parameters(), 1e-3);
  Generator batches(7);
  const std::string before = run_state(model, opt, batches);
  try {
    nn::restore_checkpoint(checkpoint, model, opt, batches);
  } catch (const Error&) {
    QKV_FUZZ_CHECK(run_state(model, opt, batches) == before);  // refused: nothing changed
    return 0;
  }
  // Restored: the parameters are the file's.
  for (const auto& [name, t] : model.named_parameters()) {
    bool found = false;
    for (const auto& [saved_name, saved] : checkpoint.model)
      if (saved_name == name) {
        found = true;
        QKV_FUZZ_CHECK(saved.to_vector<float>() == t.to_vector<float>());
      }
    QKV_FUZZ_CHECK(found);
  }
  QKV_FUZZ_CHECK(opt.steps() == checkpoint.step);
  return 0;
}

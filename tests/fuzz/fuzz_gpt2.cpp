// fuzz_gpt2.cpp: a GPT-2 folder from arbitrary bytes: config.json and model.safetensors.
//
// The bytes are: a 2-byte little-endian length L, then L bytes of config.json, and the rest is
// model.safetensors. The config's sizes say how large a model to build, so a loader that
// trusted them would allocate whatever the file asks for: here each size must be borne out by
// the weights present before anything is built. Any bytes must load or end in a qkv::Error. A
// model that loads must run: one token in, logits of (1, 1, vocab_size) out.
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qkv;
  using namespace qkv::attention;
  qkv::fuzz::Input in(data, size);
  const size_t length = in.byte() | static_cast<size_t>(in.byte()) << 8;
  const std::string rest = in.rest();
  const std::string config_text = rest.substr(0, std::min(length, rest.size()));
  const std::string weights = rest.substr(config_text.size());
  std::unique_ptr<GPT> model;
  try {
    const GPTConfig config = gpt2_config(config_text, "config.json");
    model = gpt2_from_weights(config, nn::parse_safetensors(weights).tensors, "model.safetensors");
  } catch (const Error&) {
    return 0;  // refused with a named error: the one allowed way out
  }
  NoGradGuard no_grad;
  const Tensor logits = (*model)(zeros({1, 1}, Dtype::int64));
  QKV_FUZZ_CHECK(logits.shape() == (Shape{1, 1, model->config.vocab_size}));
  return 0;
}

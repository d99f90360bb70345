// fuzz_text.cpp: the training program's text path on arbitrary bytes: UTF-8 decoding, the
// character tokenizer, the 90/10 split and batch drawing.
//
// Any bytes must decode or end in a qkv::Error (a bad byte, a truncated character, an overlong
// form, a surrogate). What decodes must round-trip: encoding the code points gives the same
// bytes back (so the decoder accepts only the one canonical spelling), and the tokenizer's
// decode(encode(text)) is the text. Then the first byte picks a block size, and every batch the
// program could draw must hold ids inside the vocabulary, with y one step ahead of x.
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qkv;
  using namespace qkv::attention;
  qkv::fuzz::Input in(data, size);
  const int64_t block = in.in(1, 16), batch = in.in(1, 4);
  const std::string text = in.rest();
  std::vector<char32_t> cps;
  try {
    cps = decode_utf8(text);
  } catch (const Error&) {
    return 0;  // refused with a named error: the one allowed way out
  }
  QKV_FUZZ_CHECK(encode_utf8(cps) == text);
  if (text.empty()) return 0;
  const CharTokenizer tok(text);
  const Tensor ids = tok.encode(text);
  QKV_FUZZ_CHECK(ids.numel() == static_cast<int64_t>(cps.size()));
  QKV_FUZZ_CHECK(tok.decode(ids.to_vector<int64_t>()) == text);
  const TextSplit split = split_90_10(ids);
  QKV_FUZZ_CHECK(split.train.numel() + split.val.numel() == ids.numel());
  Generator gen(0);
  Batch b;
  try {
    b = get_batch(split.train, block, batch, gen);
  } catch (const Error&) {
    return 0;  // text too short for this block: refused by name
  }
  QKV_FUZZ_CHECK(b.x.shape() == (Shape{batch, block}) && b.y.shape() == (Shape{batch, block}));
  const auto x = b.x.to_vector<int64_t>(), y = b.y.to_vector<int64_t>();
  for (size_t i = 0; i < x.size(); ++i) {
    QKV_FUZZ_CHECK(x[i] >= 0 && x[i] < tok.vocab_size());
    if ((i + 1) % static_cast<size_t>(block) != 0) QKV_FUZZ_CHECK(x[i + 1] == y[i]);
  }
  return 0;
}

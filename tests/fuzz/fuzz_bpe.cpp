// fuzz_bpe.cpp: a GPT-2 tokenizer's two files and a prompt, all from arbitrary bytes.
//
// The bytes are: a 2-byte little-endian length L1, a 2-byte length L2, then L1 bytes of
// vocab.json (symbol -> id), L2 bytes of merges.txt (one "a b" pair a line), and the rest is
// the prompt. Every count and id in the two files comes from the bytes, so each one is a way
// to make a careless reader allocate without bound, index past a table or loop forever. Any
// bytes must build a tokenizer or end in a qkv::Error. A tokenizer that builds must encode a
// prompt of valid UTF-8 into ids inside its vocabulary that decode to the prompt, byte for
// byte (every byte has a symbol of its own, so nothing is lost).
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qkv;
  using namespace qkv::attention;
  qkv::fuzz::Input in(data, size);
  const size_t l1 = in.byte() | static_cast<size_t>(in.byte()) << 8;
  const size_t l2 = in.byte() | static_cast<size_t>(in.byte()) << 8;
  const std::string rest = in.rest();
  const std::string vocab = rest.substr(0, std::min(l1, rest.size()));
  const std::string merges = rest.substr(vocab.size(), std::min(l2, rest.size() - vocab.size()));
  const std::string prompt = rest.substr(vocab.size() + merges.size());
  std::unique_ptr<BpeTokenizer> tok;
  try {
    tok = std::make_unique<BpeTokenizer>(
        BpeTokenizer::from_texts(vocab, merges, "vocab.json", "merges.txt"));
  } catch (const Error&) {
    return 0;  // refused with a named error: the one allowed way out
  }
  QKV_FUZZ_CHECK(tok->vocab_size() >= 256);  // at least every byte's symbol
  std::vector<int64_t> ids;
  try {
    ids = tok->encode(prompt);
  } catch (const Error&) {
    try {  // encode refuses only text that is not UTF-8
      decode_utf8(prompt);
    } catch (const Error&) {
      return 0;
    }
    QKV_FUZZ_CHECK(!"encode refused a prompt of valid UTF-8");
  }
  for (const int64_t id : ids) QKV_FUZZ_CHECK(id >= 0 && id < tok->vocab_size());
  QKV_FUZZ_CHECK(ids.size() <= prompt.size());  // a token is at least one byte
  QKV_FUZZ_CHECK(tok->decode(ids) == prompt);
  return 0;
}

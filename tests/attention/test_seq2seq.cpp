// test_seq2seq.cpp: the encoder-decoder. Oracles: cached decoding equals decoding the whole
// target at once; padding in the source changes nothing; the cross-attention rows only weigh
// real source tokens; gradcheck of the whole model with source and target of different
// lengths.
#include "attention/all.h"
#include "tests/attention/module_gradcheck.h"
#include "tests/testing.h"

namespace qkv::attention {
namespace {

Seq2SeqConfig small_config() {
  Seq2SeqConfig c;
  c.vocab_size = 7;
  c.n_embd = 8;
  c.n_head = 2;
  c.n_enc_layer = 1;
  c.n_dec_layer = 1;
  c.max_len = 6;
  return c;
}

TEST(AttentionSeq2Seq, CachedDecodingEqualsFullDecoding) {
  manual_seed(3);
  EncoderDecoder m(small_config());
  const Tensor src = from_vector(std::vector<int64_t>{1, 2, 3, 0, 0, 4, 5, 6, 1, 2}, {2, 5});
  const Tensor lengths = from_vector(std::vector<int64_t>{3, 5}, {2});
  const Tensor tgt = from_vector(std::vector<int64_t>{6, 1, 2, 3, 6, 4, 4, 5}, {2, 4});
  NoGradGuard no_grad;
  const Tensor memory = m.encode(src, lengths);
  const Tensor full = m.decode(tgt, memory, lengths);  // (2, 4, V): target shorter than source
  std::vector<KVCache> caches;
  for (int64_t t = 0; t < 4; ++t)
    EXPECT_TRUE(testing::tensor_near(m.decode(raw::narrow(tgt, 1, t, 1), memory, lengths, &caches),
                                     raw::narrow(full, 1, t, 1), 1e-5))
        << "position " << t;
}

TEST(AttentionSeq2Seq, SourcePaddingChangesNothingAndGetsNoCrossAttention) {
  manual_seed(4);
  EncoderDecoder m(small_config());
  const Tensor lengths = from_vector(std::vector<int64_t>{3}, {1});
  const Tensor a = from_vector(std::vector<int64_t>{1, 2, 3, 0, 0}, {1, 5});
  const Tensor b = from_vector(std::vector<int64_t>{1, 2, 3, 6, 5}, {1, 5});  // other padding
  const Tensor tgt = from_vector(std::vector<int64_t>{6, 3, 2}, {1, 3});
  NoGradGuard no_grad;
  EXPECT_TRUE(testing::tensor_equal(m.forward(a, lengths, tgt), m.forward(b, lengths, tgt)));
  const Tensor w = m.decoder(0).cross->attention_weights;  // (1, H, 3, 5)
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 3; j < 5; ++j) EXPECT_EQ(w.at({0, h, i, j}), 0.0f);
}

TEST(AttentionSeq2Seq, GradcheckWithDifferentSourceAndTargetLengths) {
  manual_seed(5);
  EncoderDecoder m(small_config());
  const Tensor src = from_vector(std::vector<int64_t>{1, 2, 3, 4, 5}, {1, 5});
  const Tensor lengths = from_vector(std::vector<int64_t>{4}, {1});
  const Tensor tgt = from_vector(std::vector<int64_t>{6, 3}, {1, 2});
  Tensor unused = zeros({1});  // the model's inputs are ids: gradcheck its parameters
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m.forward(src, lengths, tgt) + sum(unused) * 0.0f; }, unused));
}

TEST(AttentionSeq2Seq, GreedyStopsAtEosAndBadInputIsNamed) {
  manual_seed(6);
  EncoderDecoder m(small_config());
  const auto out = m.greedy(from_vector(std::vector<int64_t>{1, 2}, {1, 2}),
                            from_vector(std::vector<int64_t>{2}, {1}), 5, 6, 4);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(out[0].size(), 4u);
  for (int64_t t : out[0]) EXPECT_NE(t, 6);  // eos is never part of the output
  EXPECT_TRUE(testing::throws_error(
      [&] {
        m.encode(zeros({1, 9}, Dtype::int64), from_vector(std::vector<int64_t>{9}, {1}));
      },
      {"EncoderDecoder::encode", "max_len = 6", "(1, 9)"}));
}

}  // namespace
}  // namespace qkv::attention

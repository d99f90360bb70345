// Lesson 19: grouped-query attention and the KV cache: how models generate fast.
//
// What you will learn:
//   - generating text is one token at a time, and each new token attends to all earlier ones;
//     recomputing every earlier key and value at every step wastes almost all the work;
//   - a KV cache keeps the keys and values already computed: each step projects only the new
//     token, appends its key and value, and attends with one query. Same numbers, far less work;
//   - the cache costs memory, 2 * layers * H_kv * T * D floats per sequence, and
//     grouped-query attention (GQA, Llama 2/3, Mistral) shrinks it: H query heads share
//     H_kv < H key/value heads; multi-query attention (MQA) is the extreme H_kv = 1;
//   - GQA is exactly multi-head attention whose key and value heads are copied across groups.
// What comes before: lessons 10 (multi-head attention) and 16 (the tiny GPT and sampling).
// Run it: ./build/release/tutorials/19_gqa_and_kv_cache
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "attention/all.h"
#include "tutorials/common/lesson.h"

using namespace qkv;
using namespace qkv::attention;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return max(abs(sub(a, b))).item<float>();
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  lesson::Flags flags("19_gqa_and_kv_cache",
                      "Grouped-query attention and the KV cache: how models generate fast.");
  return lesson::run(flags, argc, argv, [&] {
    lesson::banner("1. How many key/value heads?");
    // A layer of d_model 512 with 8 query heads of 64; the KV cache for a 4096-token context.
    const int64_t C = 512, H = 8, D = C / H, T_ctx = 4096;
    std::cout << "d_model " << C << ", " << H << " query heads of " << D << ", context " << T_ctx
              << " tokens\n\n"
              << "  kind   kv heads   k and v weights   KV cache per layer (one sequence)\n";
    std::vector<size_t> cache_bytes;
    for (int64_t kv : {H, int64_t{2}, int64_t{1}}) {
      MultiHeadOptions o{.num_kv_heads = kv, .causal = true};
      MultiHeadAttention m(C, H, o);
      const int64_t kv_weights = m.k->weight.numel() + m.v->weight.numel();
      // 2 tensors (k and v) of (1, H_kv, T, D) floats.
      const size_t bytes = static_cast<size_t>(2 * kv * T_ctx * D) * sizeof(float);
      cache_bytes.push_back(bytes);
      const char* kind = kv == H ? "MHA" : kv == 1 ? "MQA" : "GQA";
      std::printf("  %-5s  %8lld   %15lld   %6.1f MiB\n", kind, static_cast<long long>(kv),
                  static_cast<long long>(kv_weights), static_cast<double>(bytes) / (1 << 20));
    }
    lesson::expect(cache_bytes[0] == 4 * cache_bytes[1] && cache_bytes[0] == 8 * cache_bytes[2],
                   "the cache shrinks by H / H_kv: 4x for GQA with 2 kv heads, 8x for MQA");

    lesson::banner("2. GQA is MHA with key and value heads shared by groups");
    // Query heads 0-3 read key head 0, heads 4-7 key head 1. Copy each key/value head's weight
    // rows into its group's four slots of a plain MHA: the two modules compute the same thing.
    Generator g(11);
    MultiHeadOptions gqa_options{.num_kv_heads = 2, .causal = true};
    const int64_t c = 32, h = 8, d = c / h, G = h / 2;
    MultiHeadAttention gqa(c, h, gqa_options, &g);
    MultiHeadAttention mha(c, h, {.causal = true}, &g);
    {
      NoGradGuard no_grad;
      // (2 * d, c) -> (2, 1, d, c) -> expand (2, G, d, c) -> (h * d, c): rows repeated per group.
      auto per_group = [&](const Tensor& w) {
        const Shape rest(w.shape().begin() + 1, w.shape().end());
        Shape grouped = {2, 1, d}, expanded = {2, G, d}, out = {h * d};
        for (int64_t s : rest) {
          grouped.push_back(s);
          expanded.push_back(s);
          out.push_back(s);
        }
        return reshape(contiguous(expand(reshape(w, grouped), expanded)), out);
      };
      for (auto [dst, src] : {std::pair{mha.q, gqa.q}, std::pair{mha.o, gqa.o}}) {
        copy_(dst->weight, src->weight);
        copy_(dst->bias, src->bias);
      }
      for (auto [dst, src] : {std::pair{mha.k, gqa.k}, std::pair{mha.v, gqa.v}}) {
        copy_(dst->weight, per_group(src->weight));
        copy_(dst->bias, per_group(src->bias));
      }
    }
    const Tensor x = randn({2, 6, c}, &g);
    const double gqa_vs_mha = max_abs_diff(gqa(x), mha(x));
    std::cout << "k weights: GQA " << shape_str(gqa.k->weight.shape()) << ", MHA "
              << shape_str(mha.k->weight.shape()) << "\n"
              << "max |GQA(x) - MHA-with-copied-heads(x)| = " << gqa_vs_mha << "\n";
    lesson::expect(gqa_vs_mha < 1e-6, "GQA equals MHA with its key/value heads copied per group");

    lesson::banner("3. Decoding with a KV cache");
    // Prefill a 3-token prompt, then feed one token at a time. Each step's output must equal
    // row t of running the whole sequence at once: the cache changes the work, not the numbers.
    NoGradGuard no_grad;
    const Tensor seq = randn({1, 8, c}, &g);
    const Tensor full = gqa(seq);
    KVCache cache;
    gqa.forward(narrow(seq, 1, 0, 3), Tensor(), &cache);
    std::cout << "prefill 3 tokens: cache k " << shape_str(cache.k.shape()) << "\n";
    double worst = 0;
    for (int64_t t = 3; t < 8; ++t) {
      const Tensor step = gqa.forward(narrow(seq, 1, t, 1), Tensor(), &cache);
      const double diff = max_abs_diff(step, narrow(full, 1, t, 1));
      worst = std::max(worst, diff);
      std::cout << "token " << t << ": 1 query against " << cache.length()
                << " cached keys, max |cached - full| = " << diff << "\n";
    }
    lesson::expect(worst < 1e-5, "every cached step equals full recomputation (within 1e-5)");

    lesson::banner("4. Generation, with and without the cache");
    // A GPT larger than lesson 16's: C 128, 4 heads, 4 layers, block 256, 65 tokens. Untrained
    // (random weights) - speed does not care. 255 new tokens after one.
    manual_seed(0);
    GPTConfig config{.vocab_size = 65, .n_embd = 128, .n_layer = 4, .block = 256};
    GPT model(config);
    auto timed = [&](bool use_cache, std::vector<int64_t>& tokens) {
      SampleOptions so{.use_cache = use_cache};
      double best = 1e30;
      for (int rep = 0; rep < 2; ++rep) {  // the faster of two runs: the machine may be busy
        Generator gs(3);
        const auto t0 = std::chrono::steady_clock::now();
        tokens = model.generate({0}, config.block - 1, so, gs);
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return best;
    };
    std::vector<int64_t> with_cache, without_cache;
    const double t_cache = timed(/*use_cache=*/true, with_cache),
                 t_full = timed(/*use_cache=*/false, without_cache);
    std::cout << "without cache: " << fixed(t_full * 1000, 0) << " ms (" << fixed(255 / t_full, 0)
              << " tokens/s)\n"
              << "with cache:    " << fixed(t_cache * 1000, 0) << " ms (" << fixed(255 / t_cache, 0)
              << " tokens/s)\n"
              << "speed-up:      " << fixed(t_full / t_cache, 1) << "x\n";
    lesson::expect(
        with_cache == without_cache,
        "the same 255 tokens with and without the cache (same draws, logits equal to rounding)");
    std::cout << "\nWithout the cache, step t runs the model over all t tokens: the work grows as\n"
                 "1 + 2 + ... + T = T (T + 1) / 2, about T^2 / 2 token-passes. With it, each step\n"
                 "is one token-pass plus attention over the cache: T passes in all, T / 2 times\n"
                 "fewer (128x at T = 256). The measured speed-up is far smaller: a pass over many\n"
                 "tokens runs as large matrix products, which do much more work per second than\n"
                 "the one-token steps. The longer the text, the larger the gap (bench/README.md\n"
                 "has it at three context lengths; BM_Generate in bench/bench_attention measures\n"
                 "it on yours).\n";
    lesson::exercises({"19.1 kv_append: the KV cache's append",
                       "19.2 decode_step: one token against the cache",
                       "19.3 repeat_kv: each key/value head shared by its group of query heads"});
    return lesson::finish();
  });
}

// explorer.cpp: the numbers behind each view of the browser explorer (explorer.h says which).
// Each view is written here the way its lesson writes it, so that what the page shows is what
// the lesson prints: lessons 04 and 06-13 (the attention view), 10 (the heads), 16 (training).
#include "tutorials/explorer/explorer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "attention/all.h"
#include "tutorials/common/corpus.h"
#include "tutorials/common/sentence.h"

using namespace qkv;
using namespace qkv::attention;

namespace explorer {
namespace {

// ---- JSON out --------------------------------------------------------------------------------
// Numbers with 9 significant digits, enough to give back a float's exact bits; -inf, inf and nan
// (which JSON has no words for) as the strings "-inf", "inf" and "nan".
std::string number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string quoted(const std::string& s) {
  return nn::json_escape(s);
}

// A tensor of 0, 1 or 2 dimensions as a number, an array, or an array of rows.
std::string matrix(const Tensor& t) {
  const Tensor c = contiguous(to(detach(t), Dtype::float32));
  const std::vector<float> v = c.to_vector<float>();
  if (c.dim() == 0) return number(v[0]);
  const int64_t rows = c.dim() == 1 ? 1 : c.size(0), cols = c.size(c.dim() - 1);
  std::string out = c.dim() == 2 ? "[" : "";
  for (int64_t r = 0; r < rows; ++r) {
    out += r ? ", [" : "[";
    for (int64_t j = 0; j < cols; ++j)
      out += (j ? ", " : "") + number(v[static_cast<size_t>(r * cols + j)]);
    out += "]";
  }
  return c.dim() == 2 ? out + "]" : out;
}

// {"key": value, ...} from pairs whose values are already JSON.
std::string object(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out = "{";
  for (size_t i = 0; i < fields.size(); ++i)
    out += (i ? ", " : "") + quoted(fields[i].first) + ": " + fields[i].second;
  return out + "}";
}

std::string array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

std::string strings(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const std::string& s : items) q.push_back(quoted(s));
  return array(q);
}

std::string error_json(const std::string& message) {
  return object({{"error", quoted(message)}});
}

// Runs f, and turns a qkv::Error (or any other exception) into {"error": ...}.
template <class F>
std::string guarded(F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return error_json(e.what());
  }
}

// ---- the article's sentence, or the learner's -----------------------------------------------
constexpr int64_t kMaxWords = 12;  // the page's 12 x 12 matrices still fit a screen

struct Sentence {
  // sorted: the words in sorted order, repeats included. The article's vocabulary,
  // {s: i for i, s in enumerate(sorted(words))}, gives each word its position there (a repeated
  // word its last one), so ids run up to T - 1 and the id table has T rows.
  std::vector<std::string> words, sorted;
  Tensor ids, x;  // (T,), (T, 3)
};

// Lesson 04: words without commas, ids in sorted order, Embedding(50000, 3) from seed 123.
Sentence embed(const std::string& text) {
  Sentence s;
  s.words = lesson::words(text);
  if (s.words.empty())
    throw Error("the text has no words: type a sentence (the article's is \"" + lesson::kSentence +
                "\")");
  if (static_cast<int64_t>(s.words.size()) > kMaxWords)
    throw Error("the text has " + std::to_string(s.words.size()) + " words; the explorer shows " +
                "at most " + std::to_string(kMaxWords) + " (more would not fit on a screen)");
  const std::map<std::string, int64_t> dc = lesson::vocabulary(s.words);
  s.sorted = s.words;
  std::sort(s.sorted.begin(), s.sorted.end());
  s.ids = lesson::token_ids(s.words, dc);
  manual_seed(123);
  nn::Embedding embedding(50'000, 3);
  s.x = detach(embedding(s.ids));
  return s;
}

// What each mask hides (true: filled with -inf), (T, T).
Tensor hidden(const std::string& mask, int64_t T) {
  if (mask == "none") return zeros({T, T}, Dtype::boolean);
  if (mask == "causal") return triu(ones({T, T}, Dtype::boolean), 1);  // the future (lesson 12)
  if (mask == "wrong") return causal_mask(T);  // the "may see" mask given to masked_fill
  throw Error("mask: \"none\", \"causal\" or \"wrong\", got \"" + mask + "\"");
}

}  // namespace

// ---- Attention, step by step -------------------------------------------------------------------

std::string attention_json(const AttentionRequest& r) {
  return guarded([&] {
    if (r.d_out_kq < 1 || r.d_out_kq > 8 || r.d_out_v < 1 || r.d_out_v > 8)
      throw Error("d_out_kq and d_out_v: from 1 to 8, got " + std::to_string(r.d_out_kq) + " and " +
                  std::to_string(r.d_out_v));
    const Sentence s = embed(r.text);
    const int64_t T = s.ids.size(0), V = T;  // ids in [0, T): Sentence says why
    if (r.loss == "next_token" && T < 2)
      throw Error("next-token loss needs at least 2 words: each word predicts the next");
    if (r.loss != "sum" && r.loss != "target" && r.loss != "next_token")
      throw Error("loss: \"sum\", \"target\" or \"next_token\", got \"" + r.loss + "\"");
    const Tensor hide = hidden(r.mask, T);

    // Lessons 06-12: W_query, W_key, W_value = rand(3, 2), rand(3, 2), rand(3, 4) after the seed.
    manual_seed(static_cast<uint64_t>(r.seed));
    const Tensor W_query = nn::Parameter(rand({3, r.d_out_kq}));
    const Tensor W_key = nn::Parameter(rand({3, r.d_out_kq}));
    const Tensor W_value = nn::Parameter(rand({3, r.d_out_v}));
    // The loss's own fixed numbers, drawn next: a target R (T, d_out_v), or W_out (d_out_v, V).
    const Tensor R = r.loss == "target" ? rand({T, r.d_out_v}) : Tensor();
    const Tensor W_out = r.loss == "next_token" ? rand({r.d_out_v, V}) : Tensor();

    const Tensor queries = matmul(s.x, W_query), keys = matmul(s.x, W_key),
                 values = matmul(s.x, W_value);
    const Tensor scores = matmul(queries, transpose(keys, 0, 1));  // (T, T)
    retain_grad(scores);
    // Masked, then scaled, as the article and lesson 13 write it (the same weights either way).
    const Tensor masked = masked_fill(scores, hide, -INFINITY);
    const Tensor scaled = masked / std::sqrt(static_cast<float>(r.d_out_kq));
    // A row with nothing left to see (the last word, under the wrong mask) gets weights of zero,
    // as scaled_dot_product_attention gives it (lesson 12), not softmax's NaN: its scores are
    // zeroed before the softmax and its weights multiplied by 0 after.
    const Tensor blind =  // (T, 1): every key hidden
        eq(sum(to(hide, Dtype::float32), 1, /*keepdim=*/true), static_cast<float>(T));
    Tensor weights = softmax(scaled, 1);
    if (sum(to(blind, Dtype::float32)).item<float>() > 0)
      weights =
          softmax(masked_fill(scaled, blind, 0.0f), 1) * to(logical_not(blind), Dtype::float32);
    retain_grad(weights);
    const Tensor context = matmul(weights, values);  // (T, d_out_v)
    retain_grad(context);

    Tensor loss, logits;
    if (r.loss == "sum") {
      loss = sum(context);  // lesson 13
    } else if (r.loss == "target") {
      loss = sum(context * R);
    } else {
      logits = matmul(context, W_out);  // (T, V): word t's guess at word t + 1
      loss = cross_entropy(narrow(logits, 0, 0, T - 1), narrow(s.ids, 0, 1, T - 1));
    }
    backward(loss);

    std::vector<std::pair<std::string, std::string>> grads = {
        {"context", matrix(grad(context))}, {"weights", matrix(grad(weights))},
        {"scores", matrix(grad(scores))},   {"W_query", matrix(grad(W_query))},
        {"W_key", matrix(grad(W_key))},     {"W_value", matrix(grad(W_value))}};
    std::vector<std::pair<std::string, std::string>> fields = {
        {"words", strings(s.words)},
        {"sorted", strings(s.sorted)},
        {"ids", strings([&] {
           std::vector<std::string> v;
           for (int64_t id : s.ids.to_vector<int64_t>()) v.push_back(std::to_string(id));
           return v;
         }())},
        {"mask", quoted(r.mask)},
        {"loss_kind", quoted(r.loss)},
        {"d_out_kq", std::to_string(r.d_out_kq)},
        {"d_out_v", std::to_string(r.d_out_v)},
        {"seed", std::to_string(r.seed)},
        {"x", matrix(s.x)},
        {"W_query", matrix(W_query)},
        {"W_key", matrix(W_key)},
        {"W_value", matrix(W_value)},
        {"queries", matrix(queries)},
        {"keys", matrix(keys)},
        {"values", matrix(values)},
        {"scores", matrix(scores)},
        {"hidden", matrix(to(hide, Dtype::float32))},
        {"masked", matrix(masked)},
        {"scaled", matrix(scaled)},
        {"weights", matrix(weights)},
        {"context", matrix(context)},
        {"loss", matrix(loss)}};
    if (R.defined()) fields.emplace_back("R", matrix(R));
    if (W_out.defined()) {
      fields.emplace_back("W_out", matrix(W_out));
      fields.emplace_back("logits", matrix(logits));
    }
    fields.emplace_back("grad", object(grads));
    return object(fields);
  });
}

// ---- Many heads ------------------------------------------------------------------------------

std::string heads_json(const std::string& text, int64_t num_heads, int64_t kv_heads, int64_t seed) {
  return guarded([&] {
    if (num_heads < 1 || num_heads > 8 || kv_heads < 1 || num_heads % kv_heads != 0)
      throw Error("heads: from 1 to 8, and key-value heads that divide them, got " +
                  std::to_string(num_heads) + " heads and " + std::to_string(kv_heads) +
                  " key-value heads");
    const Sentence s = embed(text);
    const int64_t T = s.ids.size(0), group = num_heads / kv_heads;
    // Lesson 10: MultiHeadAttentionWrapper(3, 2, 1, num_heads) from the seed, each head a
    // SelfAttention(3, 2, 1) with its own W_query, W_key, W_value.
    manual_seed(static_cast<uint64_t>(seed));
    MultiHeadAttentionWrapper mha(3, 2, 1, num_heads);
    const Tensor future = triu(ones({T, T}, Dtype::boolean), 1);
    std::vector<std::string> heads;
    Tensor all;
    for (int64_t h = 0; h < num_heads; ++h) {
      const SelfAttention& own = *mha.head(h);
      const SelfAttention& shared = *mha.head(h / group * group);  // the group's keys, values
      NoGradGuard no_grad;
      const Tensor q = matmul(s.x, own.W_query), k = matmul(s.x, shared.W_key),
                   v = matmul(s.x, shared.W_value);
      const Tensor scores = matmul(q, transpose(k, 0, 1)) / std::sqrt(2.0f);
      const Tensor w = softmax(masked_fill(scores, future, -INFINITY), 1);  // causal
      const Tensor context = matmul(w, v);
      heads.push_back(object({{"head", std::to_string(h)},
                              {"kv_head", std::to_string(h / group)},
                              {"queries", matrix(q)},
                              {"keys", matrix(k)},
                              {"values", matrix(v)},
                              {"weights", matrix(w)},
                              {"context", matrix(context)}}));
    }
    return object({{"words", strings(s.words)},
                   {"num_heads", std::to_string(num_heads)},
                   {"kv_heads", std::to_string(kv_heads)},
                   {"heads", array(heads)}});
  });
}

// ---- A tiny GPT that trains in the page --------------------------------------------------------

namespace {
// Lesson 16's defaults (its Options).
constexpr int64_t kEmbd = 64, kHead = 4, kLayer = 2, kBlock = 32, kBatch = 16, kSeed = 1337,
                  kEvalBatches = 20;
constexpr double kLr = 1e-3, kTemperature = 0.8;

// An evaluation taken one batch at a time (Trainer::evaluate_part): the training text's batches
// from seed 1, then the validation text's from seed 0, as Trainer::evaluate takes them at once.
struct Evaluation {
  Generator train_batches{1}, val_batches{0};
  int64_t done = 0;
  double train = 0, val = 0, val_last = 0;
};

struct Run {
  std::shared_ptr<GPT> model;
  std::unique_ptr<nn::AdamW> opt;
  Generator batches{0};
  int64_t step = 0;
  Evaluation evaluation;
};
}  // namespace

struct Trainer::State {
  std::string text = lesson::builtin_corpus();
  CharTokenizer tok{text};
  TextSplit split = split_90_10(tok.encode(text));
  Run causal, no_mask;

  Run& run(const std::string& name) {
    if (name == "causal") return causal;
    if (name == "no_mask") return no_mask;
    throw Error("run: \"causal\" or \"no_mask\", got \"" + name + "\"");
  }
  // Lesson 16's new_run: the model from the seed, AdamW, the batches' own generator.
  Run fresh(bool is_causal) const {
    Run r;
    manual_seed(static_cast<uint64_t>(kSeed));
    r.model = std::make_shared<GPT>(GPTConfig{.vocab_size = tok.vocab_size(),
                                              .n_embd = kEmbd,
                                              .n_head = kHead,
                                              .n_layer = kLayer,
                                              .block = kBlock,
                                              .causal = is_causal});
    r.opt = std::make_unique<nn::AdamW>(r.model->parameters(), kLr);
    r.batches = Generator(static_cast<uint64_t>(kSeed));
    return r;
  }
  // One batch of lesson 16's evaluate: its cross-entropy over every position and at the last
  // position alone.
  static std::pair<double, double> batch_loss(GPT& m, const Tensor& data, Generator& g) {
    NoGradGuard no_grad;
    const int64_t N = kBatch * kBlock, V = m.config.vocab_size;
    const Batch b = get_batch(data, kBlock, kBatch, g);
    const Tensor logits = m(b.x);
    return {cross_entropy(view(logits, {N, V}), view(b.y, {N})).item<float>(),
            cross_entropy(contiguous(select(logits, 1, kBlock - 1)),
                          contiguous(select(b.y, 1, kBlock - 1)))
                .item<float>()};
  }
  // Lesson 16's evaluate: the mean of kEvalBatches batches drawn from seed.
  std::pair<double, double> evaluate(GPT& m, const Tensor& data, uint64_t seed) const {
    Generator g(seed);
    double all = 0, last = 0;
    for (int64_t i = 0; i < kEvalBatches; ++i) {
      const auto [a, l] = batch_loss(m, data, g);
      all += a;
      last += l;
    }
    return {all / kEvalBatches, last / kEvalBatches};
  }
};

Trainer::Trainer() : s_(std::make_unique<State>()) {
  s_->causal = s_->fresh(true);
  s_->no_mask = s_->fresh(false);
}
Trainer::~Trainer() = default;

std::string Trainer::step(const std::string& name) {
  return guarded([&] {
    Run& r = s_->run(name);
    const int64_t N = kBatch * kBlock, V = r.model->config.vocab_size;
    const Batch b = get_batch(s_->split.train, kBlock, kBatch, r.batches);
    const Tensor loss = cross_entropy(view((*r.model)(b.x), {N, V}), view(b.y, {N}));
    const double value = loss.item<float>();
    r.opt->zero_grad();
    backward(loss);
    r.opt->step();
    return object({{"step", std::to_string(r.step++)}, {"loss", number(value)}});
  });
}

std::string Trainer::evaluate(const std::string& name) {
  return guarded([&] {
    Run& r = s_->run(name);
    const double train = s_->evaluate(*r.model, s_->split.train, 1).first;  // lesson 16's seeds
    const auto [val, val_last] = s_->evaluate(*r.model, s_->split.val, 0);
    return object({{"step", std::to_string(r.step)},
                   {"train", number(static_cast<float>(train))},
                   {"val", number(static_cast<float>(val))},
                   {"val_last", number(static_cast<float>(val_last))}});
  });
}

std::string Trainer::evaluate_part(const std::string& name) {
  return guarded([&] {
    Run& r = s_->run(name);
    Evaluation& e = r.evaluation;
    if (e.done < kEvalBatches) {
      e.train += State::batch_loss(*r.model, s_->split.train, e.train_batches).first;
    } else {
      const auto [all, last] = State::batch_loss(*r.model, s_->split.val, e.val_batches);
      e.val += all;
      e.val_last += last;
    }
    if (++e.done < 2 * kEvalBatches)
      return object({{"done", "false"}, {"batches", std::to_string(e.done)}});
    const std::string out =
        object({{"step", std::to_string(r.step)},
                {"train", number(static_cast<float>(e.train / kEvalBatches))},
                {"val", number(static_cast<float>(e.val / kEvalBatches))},
                {"val_last", number(static_cast<float>(e.val_last / kEvalBatches))}});
    e = Evaluation{};
    return out;
  });
}

std::string Trainer::maps(const std::string& name) {
  return guarded([&] {
    Run& r = s_->run(name);
    NoGradGuard no_grad;
    const int64_t T = 24;  // lesson 16's figure: the first 24 validation characters
    const Tensor x = view(contiguous(narrow(s_->split.val, 0, 0, T)), {1, T});
    (*r.model)(x);
    std::vector<std::string> chars, layers;
    for (int64_t id : x.to_vector<int64_t>()) chars.push_back(s_->tok.decode({id}));
    for (int64_t l = 0; l < kLayer; ++l) {
      std::vector<std::string> heads;
      for (int64_t h = 0; h < kHead; ++h)
        heads.push_back(matrix(select(select(r.model->block(l).attention_weights, 0, 0), 0, h)));
      layers.push_back(array(heads));
    }
    return object(
        {{"step", std::to_string(r.step)}, {"chars", strings(chars)}, {"layers", array(layers)}});
  });
}

std::string Trainer::sample(const std::string& name, const std::string& prompt, int64_t n) {
  return guarded([&] {
    Run& r = s_->run(name);
    if (n < 1 || n > 1000)
      throw Error("sample length: from 1 to 1000 characters, got " + std::to_string(n));
    std::vector<int64_t> ids;
    if (prompt.empty()) {
      ids = {s_->split.val.to_vector<int64_t>()[0]};  // lesson 16's default prompt
    } else {
      const std::vector<char32_t> chars = decode_utf8(prompt);
      if (static_cast<int64_t>(chars.size()) > kBlock)
        throw Error("the prompt has " + std::to_string(chars.size()) + " characters; the model " +
                    "reads at most " + std::to_string(kBlock) + " (its context, block)");
      const std::vector<char32_t> known = s_->tok.chars();
      std::string missing;
      for (const char32_t c : chars)
        if (!std::binary_search(known.begin(), known.end(), c) &&
            missing.find(encode_utf8({c})) == std::string::npos)
          missing += (missing.empty() ? "" : " ") + std::string("'") + encode_utf8({c}) + "'";
      if (!missing.empty())
        throw Error("the prompt has characters the corpus never uses: " + missing +
                    " (the model knows only the corpus's " + std::to_string(known.size()) +
                    " characters)");
      ids = s_->tok.encode(prompt).to_vector<int64_t>();
    }
    NoGradGuard no_grad;
    Generator gs(static_cast<uint64_t>(kSeed));  // lesson 16: the seed of its samples
    const std::vector<int64_t> out =
        r.model->generate(ids, n, SampleOptions{.temperature = kTemperature}, gs);
    return object({{"step", std::to_string(r.step)}, {"text", quoted(s_->tok.decode(out))}});
  });
}

std::string Trainer::info() const {
  return object({{"n_embd", std::to_string(kEmbd)},
                 {"n_head", std::to_string(kHead)},
                 {"n_layer", std::to_string(kLayer)},
                 {"block", std::to_string(kBlock)},
                 {"batch", std::to_string(kBatch)},
                 {"lr", number(kLr)},
                 {"seed", std::to_string(kSeed)},
                 {"eval_batches", std::to_string(kEvalBatches)},
                 {"parameters", std::to_string(s_->causal.model->num_parameters())},
                 {"vocab_size", std::to_string(s_->tok.vocab_size())},
                 {"characters", std::to_string(s_->text.size())},
                 {"vocabulary", quoted(s_->tok.vocabulary())}});
}

std::string Trainer::time_steps(int64_t steps) {
  return guarded([&] {
    if (steps < 1 || steps > 100'000)
      throw Error("steps to time: from 1 to 100000, got " + std::to_string(steps));
    Trainer t;
    t.step("causal");  // the first step allocates what the others reuse
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < steps; ++i) t.step("causal");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return object({{"steps", std::to_string(steps)}, {"seconds", number(seconds)}});
  });
}

// ---- The self-check's cases --------------------------------------------------------------------

std::string reference_json() {
  std::vector<std::string> attention;
  for (const char* mask : {"none", "causal", "wrong"})
    for (const char* loss : {"sum", "target", "next_token"})
      attention.push_back(attention_json({.mask = mask, .loss = loss}));
  attention.push_back(
      attention_json({.text = "the cat sat on the mat", .mask = "causal", .loss = "next_token"}));
  std::vector<std::string> heads;
  for (const auto& [h, kv] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {4, 2}, {4, 1}})
    heads.push_back(heads_json(lesson::kSentence, h, kv));
  Trainer t;
  std::vector<std::string> training;
  for (const char* run : {"causal", "no_mask"}) {
    training.push_back(t.evaluate(run));
    for (int i = 0; i < 3; ++i) training.push_back(t.step(run));
    std::string parts;  // the same evaluation, a batch at a time, as the page takes it
    while (parts.find("\"done\": false") != std::string::npos || parts.empty())
      parts = t.evaluate_part(run);
    training.push_back(parts);
    training.push_back(t.maps(run));
    training.push_back(t.sample(run, "the ", 40));
  }
  return object(
      {{"attention", array(attention)}, {"heads", array(heads)}, {"training", array(training)}});
}

}  // namespace explorer

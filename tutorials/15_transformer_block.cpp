// Lesson 15: the transformer block: lesson 14's head grown into nanoGPT's Block, and why each
// of its pieces is there.
//
// What you will learn:
//   - multi-head self-attention from lesson 14's Head: H heads of size C / H side by side, their
//     outputs concatenated back to width C and mixed by one Linear (proj), as Karpathy builds it;
//   - the MLP: Linear(C, 4C), GELU, Linear(4C, C), the same small network at every position;
//   - the residual stream: x = x + attn(...), x = x + mlp(...). A sublayer adds what it found to
//     a running sum instead of replacing it, and backward sends the sum's gradient to the block
//     below through the + unchanged, whatever the sublayer did to its own copy;
//   - pre-LayerNorm: each sublayer reads a normalised copy of the stream (ln_1, ln_2); the stream
//     itself is left as it is (the model's last LayerNorm, ln_f, comes after the last block);
//   - nanoGPT's Block, line for line, and that it computes what qkv's attention::Block computes;
//   - why the residual path and LayerNorm are there: a stack of 8 blocks trained four ways (as
//     built, without the residual path, without LayerNorm, without both), with the gradient
//     that reaches each block and the loss curves side by side.
// What comes before: lesson 14 (one head over a batch). What comes after: lesson 16 trains a
// tiny GPT made of these blocks.
// Run it: ./build/release/tutorials/15_transformer_block       (writes transformer_block_loss.svg)
//         ./build/release/tutorials/15_transformer_block --help
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "attention/all.h"
#include "tutorials/common/corpus.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/plot.h"

using namespace qkv;
using attention::Batch;
using attention::CharTokenizer;
using attention::get_batch;
using attention::split_90_10;
using attention::TextSplit;

namespace {

// ---- 1. Many heads: Karpathy's MultiHeadAttention -------------------------------------------
// >>> class MultiHeadAttention(nn.Module):
// >>>     def __init__(self, num_heads, head_size):
// >>>         self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
// >>>         self.proj = nn.Linear(n_embd, n_embd)
// >>>     def forward(self, x):
// >>>         out = torch.cat([h(x) for h in self.heads], dim=-1)
// >>>         return self.proj(out)
class MultiHeadAttention : public nn::UnaryModule {
 public:
  MultiHeadAttention(int64_t n_embd, int64_t num_heads) {
    heads = register_module("heads", std::make_shared<nn::ModuleList>());
    for (int64_t h = 0; h < num_heads; ++h)
      heads->push_back(
          std::make_shared<attention::Head>(n_embd, n_embd / num_heads));  // lesson 14's Head
    proj = register_module("proj", std::make_shared<nn::Linear>(n_embd, n_embd));
  }
  Tensor forward(const Tensor& x) override {  // (B, T, C) -> (B, T, C)
    std::vector<Tensor> outs;
    for (size_t h = 0; h < heads->size(); ++h)
      outs.push_back(heads->at<attention::Head>(h)->forward(x));  // each (B, T, C / H)
    return proj->forward(cat(outs, -1));  // side by side: (B, T, C), then mixed
  }
  std::shared_ptr<nn::ModuleList> heads;
  std::shared_ptr<nn::Linear> proj;
};

// ---- 2. The MLP: nanoGPT's MLP -----------------------------------------------------------------
// >>> class MLP(nn.Module):
// >>>     def __init__(self, config):
// >>>         self.c_fc    = nn.Linear(config.n_embd, 4 * config.n_embd)
// >>>         self.gelu    = nn.GELU()
// >>>         self.c_proj  = nn.Linear(4 * config.n_embd, config.n_embd)
// >>>     def forward(self, x):
// >>>         return self.c_proj(self.gelu(self.c_fc(x)))
class MLP : public nn::UnaryModule {
 public:
  explicit MLP(int64_t n_embd) {
    c_fc = register_module("c_fc", std::make_shared<nn::Linear>(n_embd, 4 * n_embd));
    c_proj = register_module("c_proj", std::make_shared<nn::Linear>(4 * n_embd, n_embd));
  }
  Tensor forward(const Tensor& x) override {  // (B, T, C) -> (B, T, 4C) -> (B, T, C)
    return c_proj->forward(gelu(c_fc->forward(x)));
  }
  std::shared_ptr<nn::Linear> c_fc, c_proj;
};

// ---- 3. The block: nanoGPT's Block -------------------------------------------------------------
// >>> class Block(nn.Module):
// >>>     def __init__(self, config):
// >>>         self.ln_1 = nn.LayerNorm(config.n_embd)
// >>>         self.attn = CausalSelfAttention(config)
// >>>         self.ln_2 = nn.LayerNorm(config.n_embd)
// >>>         self.mlp = MLP(config)
// >>>     def forward(self, x):
// >>>         x = x + self.attn(self.ln_1(x))
// >>>         x = x + self.mlp(self.ln_2(x))
// >>>         return x
// The two switches are this lesson's experiment (section 5): residual = false replaces
// "x = x + f(x)" by "x = f(x)"; layer_norm = false feeds each sublayer the stream itself.
struct BlockOptions {
  bool residual = true, layer_norm = true;
};

class Block : public nn::UnaryModule {
 public:
  Block(int64_t n_embd, int64_t num_heads, BlockOptions options = {}) : options(options) {
    ln_1 = register_module("ln_1", std::make_shared<nn::LayerNorm>(n_embd));
    attn = register_module("attn", std::make_shared<MultiHeadAttention>(n_embd, num_heads));
    ln_2 = register_module("ln_2", std::make_shared<nn::LayerNorm>(n_embd));
    mlp = register_module("mlp", std::make_shared<MLP>(n_embd));
  }
  Tensor forward(const Tensor& x) override {
    if (options.residual && options.layer_norm) {            // the block as every GPT builds it
      const Tensor h = x + attn->forward(ln_1->forward(x));  // (B, T, C)
      return h + mlp->forward(ln_2->forward(h));
    }
    // The experiment's other three blocks: the same two sublayers, one piece taken out.
    auto norm = [&](nn::LayerNorm& ln, const Tensor& t) {
      return options.layer_norm ? ln.forward(t) : t;
    };
    auto add = [&](const Tensor& stream, const Tensor& found) {
      return options.residual ? stream + found : found;
    };
    const Tensor h = add(x, attn->forward(norm(*ln_1, x)));
    return add(h, mlp->forward(norm(*ln_2, h)));
  }
  BlockOptions options;
  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<MultiHeadAttention> attn;
  std::shared_ptr<MLP> mlp;
};

// ---- 5. A deep stack of blocks, a character model -------------------------------------------
// tokens + positions -> blocks -> ln_f -> logits, as lesson 16's GPT, with the blocks above.
class Stack : public nn::Module {
 public:
  Stack(int64_t vocab, int64_t n_embd, int64_t num_heads, int64_t n_layer, int64_t block,
        BlockOptions options)
      : options(options) {
    tok = register_module("tok", std::make_shared<nn::Embedding>(vocab, n_embd));
    pos = register_module("pos", std::make_shared<nn::Embedding>(block, n_embd));
    blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
    for (int64_t i = 0; i < n_layer; ++i)
      blocks->push_back(std::make_shared<Block>(n_embd, num_heads, options));
    ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(n_embd));
    head = register_module("head", std::make_shared<nn::Linear>(n_embd, vocab));
  }
  // (B, T) -> (B, T, V). inputs, if given, receives each block's input (for its gradient).
  Tensor forward(const Tensor& idx, std::vector<Tensor>* inputs = nullptr) {
    const int64_t T = idx.size(1);
    Tensor x = tok->forward(idx) + pos->forward(arange(T));  // (B, T, C)
    for (size_t i = 0; i < blocks->size(); ++i) {
      if (inputs) {
        retain_grad(x);  // keep dL/dx of this non-leaf tensor after backward
        inputs->push_back(x);
      }
      x = blocks->at<Block>(i)->forward(x);
    }
    return head->forward(options.layer_norm ? ln_f->forward(x) : x);
  }
  BlockOptions options;
  std::shared_ptr<nn::Embedding> tok, pos;
  std::shared_ptr<nn::ModuleList> blocks;
  std::shared_ptr<nn::LayerNorm> ln_f;
  std::shared_ptr<nn::Linear> head;
};

struct Variant {
  std::string name = "", short_name = "";
  BlockOptions options = {};
  std::vector<double> grad_norms = {};  // ||dL/dx|| at each block's input, at step 0
  double spread = 0;  // how far apart the positions are after the last block, at step 0
  std::vector<std::pair<double, double>> losses = {};  // (step, training loss)
  double val_loss = 0;
};

double rms(const Tensor& t) {  // the root mean square of t's entries
  return std::sqrt(mean(t * t).item<float>());
}

// How different the T positions of a (B, T, C) stream are: the part of each vector that is
// not the sequence's mean vector, relative to the whole. 0: every position holds the same
// vector, and nothing after it can tell one position from another.
double spread(const Tensor& x) {
  return rms(x - mean(x, 1, true)) / rms(x);
}

struct Setup {
  int64_t n_layer, n_embd, num_heads, steps, seed;
  double lr;
};

// Trains one variant of the stack from the same seed and batches as the others. The gradient
// norms and the spread are measured on the first batch, before any update.
void train(Variant& variant, const TextSplit& split, int64_t vocab, const Setup& s) {
  const int64_t B = 16, T = 32;
  manual_seed(static_cast<uint64_t>(s.seed));
  Stack model(vocab, s.n_embd, s.num_heads, s.n_layer, T, variant.options);
  nn::AdamW opt(model.parameters(), s.lr);
  Generator g(static_cast<uint64_t>(s.seed));
  for (int64_t step = 0; step < s.steps; ++step) {
    const Batch b = get_batch(split.train, T, B, g);  // x, y (B, T)
    std::vector<Tensor> inputs;                       // each block's input, at step 0
    const Tensor logits = model.forward(b.x, step == 0 ? &inputs : nullptr);  // (B, T, V)
    const Tensor loss = cross_entropy(view(logits, {B * T, vocab}), view(b.y, {B * T}));
    opt.zero_grad();
    backward(loss);
    if (step == 0) {
      for (const Tensor& in : inputs)
        variant.grad_norms.push_back(std::sqrt(sum(grad(in) * grad(in)).item<float>()));
      NoGradGuard no_grad;
      variant.spread = spread(model.blocks->at<Block>(inputs.size() - 1)->forward(inputs.back()));
    }
    opt.step();
    variant.losses.emplace_back(static_cast<double>(step), loss.item<float>());
  }
  NoGradGuard no_grad;
  Generator gv(0);  // validation: 10 fixed batches, the same for every variant
  for (int i = 0; i < 10; ++i) {
    const Batch b = get_batch(split.val, T, B, gv);
    variant.val_loss +=
        cross_entropy(view(model.forward(b.x), {B * T, vocab}), view(b.y, {B * T})).item<float>() /
        10;
  }
}

// The cross-entropy on the validation text of a model that knows only how often each character
// occurs in the training text (no context at all): what a model that cannot tell positions
// apart can reach.
double frequency_loss(const TextSplit& split, int64_t vocab) {
  std::vector<double> count(static_cast<size_t>(vocab), 1.0);  // add-one, as lesson 05
  for (const int64_t id : split.train.to_vector<int64_t>()) count[static_cast<size_t>(id)] += 1;
  double total = 0, loss = 0;
  for (const double c : count) total += c;
  const std::vector<int64_t> val = split.val.to_vector<int64_t>();
  for (const int64_t id : val) loss -= std::log(count[static_cast<size_t>(id)] / total);
  return loss / static_cast<double>(val.size());
}

// A loss to 4 decimals, or "nan" / "inf" for a run that diverged (printf would write "-nan").
std::string loss_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

// A loss curve, each point the mean of the last 10 steps (one batch's loss is noisy).
std::vector<std::pair<double, double>> smoothed(const std::vector<std::pair<double, double>>& p) {
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < p.size(); ++i) {
    const size_t from = i >= 9 ? i - 9 : 0;  // summed afresh: a huge loss cannot linger as
    double window = 0;                       // rounding error in a running sum
    for (size_t j = from; j <= i; ++j) window += p[j].second;
    out.emplace_back(p[i].first, window / static_cast<double>(i + 1 - from));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Setup setup{.n_layer = 8, .n_embd = 32, .num_heads = 4, .steps = 300, .seed = 1337, .lr = 1e-2};
  std::string svg_dir = ".";
  lesson::Flags flags("15_transformer_block",
                      "The transformer block from lesson 14's head, and why each piece is there.");
  flags.number("--n_layer", &setup.n_layer, "blocks in section 5's stack", 2, 32);
  flags.number("--n_embd", &setup.n_embd, "width C of the stack's stream", 4, 256);
  flags.number("--n_head", &setup.num_heads, "heads per block of the stack (must divide C)", 1, 64);
  flags.number("--steps", &setup.steps, "training steps per variant (the checks need 300)", 1,
               1'000'000);
  flags.real("--lr", &setup.lr, "AdamW's learning rate for all four variants", 0, 1);
  flags.number("--seed", &setup.seed, "seed of the stack's weights and batches", 0);
  flags.output_folder("--svg_dir", &svg_dir, "folder for transformer_block_loss.svg");
  return lesson::run(flags, argc, argv, [&] {
    if (setup.n_embd % setup.num_heads != 0)
      flags.fail("--n_embd (" + std::to_string(setup.n_embd) + ") must be divisible by --n_head (" +
                 std::to_string(setup.num_heads) + ")");
    // Section 5's numbered checks hold for its defaults; other flags are an experiment.
    lesson::article_values() = setup.n_layer == 8 && setup.n_embd == 32 && setup.num_heads == 4 &&
                               setup.seed == 1337 && setup.lr == 1e-2;
    lesson::skipped_because() = "not the lesson's default sizes, seed and lr";
    const int64_t B = 4, T = 8, C = 32, H = 4;  // lesson 14's batch, and 4 heads of 8

    lesson::banner("1. From one head to four");
    manual_seed(1337);
    const Tensor x = randn({B, T, C});
    MultiHeadAttention mha(C, H);
    const Tensor attended = mha(x);
    std::cout << "x " << shape_str(x.shape()) << " -> 4 heads, each " << shape_str({B, T, C / H})
              << " -> side by side " << shape_str({B, T, C}) << " -> proj -> "
              << shape_str(attended.shape()) << "\n";
    std::cout << "Each head is lesson 14's: its own key, query and value, causal, scaled by\n"
                 "(C / H)^-0.5. Four heads of 8 cost what one head of 32 costs, but each can\n"
                 "attend somewhere else: one to the previous token, one to the start of a word.\n"
                 "proj mixes what they found back into one vector per position.\n";
    lesson::expect(attended.shape() == Shape{B, T, C}, "multi-head attention keeps (B, T, C)");

    lesson::banner("2. The MLP: thinking about what was gathered");
    MLP mlp(C);
    const Tensor thought = mlp(x);
    std::cout << "x " << shape_str(x.shape()) << " -> c_fc " << shape_str({B, T, 4 * C})
              << " -> GELU -> c_proj " << shape_str(thought.shape()) << "\n"
              << "Attention moves information between positions; the MLP then works on each\n"
                 "position alone (the same weights at every one), 4x wider inside.\n";
    const Tensor first_alone = mlp(narrow(x, 1, 0, 1));  // position 0 by itself
    const double alone = max(abs(first_alone - narrow(thought, 1, 0, 1))).item<float>();
    lesson::expect(alone < 1e-6, "position 0 through the MLP alone gives the same numbers");

    lesson::banner("3. The block: a residual stream, read through LayerNorm");
    manual_seed(1337);
    Block block(C, H);
    const Tensor y = block(x);
    std::cout << "x = x + attn(ln_1(x))   # (B, T, C): attention adds what it gathered\n"
                 "x = x + mlp(ln_2(x))    # (B, T, C): the MLP adds what it made of it\n"
                 "The stream x is never replaced, only added to: after GPT-2 small's 12 blocks\n"
                 "it is the embedding plus 24 contributions. Each sublayer reads a normalised\n"
                 "copy (mean 0, variance 1 per position, then a learned gain and shift), so it\n"
                 "sees inputs of the same size however large the stream has grown.\n";
    std::printf("root mean square of the stream: %.4f in, %.4f out; of ln_1(x): %.4f\n", rms(x),
                rms(y), rms(block.ln_1->forward(x)));
    lesson::expect(y.shape() == x.shape(), "a block maps (B, T, C) to (B, T, C): blocks stack");

    lesson::banner("4. The same block in the library: attention::Block");
    // qkv's Block (attention/gpt.h) keeps one q, k and v of (C, C) for all heads, with biases;
    // head h's rows are rows [h*D, (h+1)*D) of each. Copy this lesson's weights into it.
    attention::GPTConfig config{
        .vocab_size = 1, .n_embd = C, .n_head = H, .n_layer = 1, .block = T};
    attention::Block library(config);
    {
      NoGradGuard no_grad;
      const int64_t D = C / H;
      for (int64_t h = 0; h < H; ++h) {
        const attention::Head& head =
            *block.attn->heads->at<attention::Head>(static_cast<size_t>(h));
        copy_(narrow(library.q->weight, 0, h * D, D), head.query->weight);
        copy_(narrow(library.k->weight, 0, h * D, D), head.key->weight);
        copy_(narrow(library.v->weight, 0, h * D, D), head.value->weight);
      }
      for (const auto& lin : {library.q, library.k, library.v}) copy_(lin->bias, zeros({C}));
      copy_(library.o->weight, block.attn->proj->weight);
      copy_(library.o->bias, block.attn->proj->bias);
      copy_(library.fc->weight, block.mlp->c_fc->weight);
      copy_(library.fc->bias, block.mlp->c_fc->bias);
      copy_(library.proj->weight, block.mlp->c_proj->weight);
      copy_(library.proj->bias, block.mlp->c_proj->bias);
    }
    const double same = max(abs(library(x) - y)).item<float>();
    std::printf("max |attention::Block(x) - this lesson's Block(x)| = %.1e\n", same);
    lesson::expect(same < 1e-5, "the library's Block computes this lesson's block");
    std::cout << "The tiny GPT of lesson 16 is a stack of these blocks between the embeddings\n"
                 "and the output layer.\n";

    lesson::banner("5. Why both: " + std::to_string(setup.n_layer) + " blocks, trained four ways");
    const std::string text = lesson::builtin_corpus();
    const CharTokenizer tok(text);
    const TextSplit split = split_90_10(tok.encode(text));
    std::vector<Variant> variants = {{"residual + LayerNorm", "res + LN", {true, true}},
                                     {"LayerNorm, no residual", "LN only", {false, true}},
                                     {"residual, no LayerNorm", "res only", {true, false}},
                                     {"neither", "neither", {false, false}}};
    std::printf(
        "Lesson 16's character data; C %lld, %lld heads, %lld blocks, AdamW at lr %g,\n"
        "%lld steps of 16 x 32 tokens: the same initial draws and batches for all four.\n",
        static_cast<long long>(setup.n_embd), static_cast<long long>(setup.num_heads),
        static_cast<long long>(setup.n_layer), setup.lr, static_cast<long long>(setup.steps));
    for (Variant& v : variants) train(v, split, tok.vocab_size(), setup);
    const size_t last = static_cast<size_t>(setup.n_layer - 1);
    std::printf(
        "\n||dL/dx|| at the input of each block, on the first batch (before training):\n"
        "  block");
    for (const Variant& v : variants) std::printf("  %10s", v.short_name.c_str());
    std::printf("\n");
    for (size_t l = 0; l <= last; ++l) {
      std::printf("  %5zu", l);
      for (const Variant& v : variants) std::printf("  %10.2e", v.grad_norms[l]);
      std::printf("\n");
    }
    const double unigram = frequency_loss(split, tok.vocab_size());
    const std::string ratio = "grad 0 / grad " + std::to_string(last);
    std::printf("\n  %-24s %9s %16s %10s\n", "", "val_loss", ratio.c_str(), "spread");
    for (const Variant& v : variants)
      std::printf("  %-24s %9s %16.2e %10.2e\n", v.name.c_str(),
                  std::isfinite(v.val_loss) ? loss_text(v.val_loss).c_str() : "diverged",
                  v.grad_norms[0] / v.grad_norms[last], v.spread);
    std::printf(
        "  (val_loss after the %lld steps; the gradient ratio and the spread at step 0, before\n"
        "  training. Spread: how different the positions still are after the last block, 0 =\n"
        "  all the same. Knowing only how often each character occurs gives val_loss %.4f.)\n",
        static_cast<long long>(setup.steps), unigram);

    // What the table says, from its own numbers.
    const Variant &both = variants[0], &ln_only = variants[1], &res_only = variants[2],
                  &neither = variants[3];
    // Each paragraph is printed only where this run's numbers show what it says (other flags
    // may give other numbers).
    const auto ratio_of = [&](const Variant& v) { return v.grad_norms[0] / v.grad_norms[last]; };
    const bool stuck = !(ln_only.val_loss < unigram - 0.1) && !(neither.val_loss < unigram - 0.1);
    std::cout << "\n";
    if (ratio_of(neither) < 1e-3 && neither.spread < 0.05)
      std::printf(
          "Neither: each block replaces the stream with what its randomly initialised\n"
          "sublayers make of it, and backward multiplies the gradient by their small weights\n"
          "block after block: block 0 receives %.1e of what block %zu receives, a vanishing\n"
          "gradient. Attention averages positions into each other each time, and after %zu\n"
          "blocks every position holds nearly the same vector (spread %.1e).\n",
          ratio_of(neither), last, last + 1, neither.spread);
    if (ratio_of(ln_only) > 1e3 * ratio_of(neither) && ln_only.spread < 0.05 && stuck)
      std::printf(
          "LayerNorm alone rescales what each sublayer reads, so the gradient shrinks far less\n"
          "(block 0 gets %.2g of block %zu's), but the positions still blur into one (spread\n"
          "%.1e): nothing carries a position's own token past the attention, and a model that\n"
          "cannot tell positions apart can only learn how common each character is (val_loss\n"
          "%.4f here, %.4f for character counts).\n",
          ratio_of(ln_only), last, ln_only.spread, ln_only.val_loss, unigram);
    if (both.spread > 0.5 && res_only.spread > 0.5 && ratio_of(both) > 0.5 && ratio_of(both) < 2)
      std::printf(
          "The residual path keeps x and adds to it: each position keeps its own vector (spread\n"
          "%.2f with LayerNorm, %.2f without), and the + hands the gradient down unchanged, so\n"
          "block 0 gets %.2f of block %zu's with LayerNorm.\n",
          both.spread, res_only.spread, ratio_of(both), last);
    // A run that diverged has a val_loss of NaN or infinity: said in words, never compared.
    const auto outcome = [](const Variant& v) {
      return std::isfinite(v.val_loss) ? "val_loss " + loss_text(v.val_loss)
                                       : "diverged (val_loss " + loss_text(v.val_loss) + ")";
    };
    const bool ln_helped = std::isfinite(both.val_loss) &&
                           (!std::isfinite(res_only.val_loss) || res_only.val_loss > both.val_loss);
    std::printf(
        "Without LayerNorm each sublayer reads the raw stream, whose scale changes as blocks add\n"
        "to it and as training moves the weights; with it, every sublayer reads inputs of one\n"
        "scale. %s:\nwithout LayerNorm %s, with it %s.\n",
        ln_helped ? "At this learning rate that matters" : "In this run it did not help",
        outcome(res_only).c_str(), outcome(both).c_str());
    lesson::article_note(
        "(At --lr 1e-3 the stack without LayerNorm does at least as well as the one with it:\n"
        "what LayerNorm buys is the higher rates, and the depths, it lets a model train at.)\n");

    std::vector<lesson::Series> curves;
    double y_max = 0;  // the y axis ends a fifth above the highest start: a diverging curve is cut
    for (const Variant& v : variants) {
      curves.push_back({.name = v.name, .points = smoothed(v.losses)});
      if (!curves.back().points.empty() && std::isfinite(curves.back().points[0].second))
        y_max = std::max(y_max, 1.2 * curves.back().points[0].second);
    }
    std::vector<std::string> caption;  // what this run's curves show, where they show it
    if (stuck && std::isfinite(ln_only.val_loss) && std::isfinite(neither.val_loss) &&
        ln_only.spread < 0.05 && neither.spread < 0.05)
      caption.push_back("Without the residual path (the 2nd and 4th) the loss stops near " +
                        lesson::tick_text(unigram) +
                        ", the character counts': every position holds one vector.");
    if (!std::isfinite(both.val_loss) || !(both.val_loss < unigram - 0.1))
      caption.push_back("At this lr (" + lesson::tick_text(setup.lr) +
                        ") even the stack with both did not learn: try a smaller --lr.");
    else
      caption.push_back(ln_helped ? "With it the stack learns, and with LayerNorm as well it "
                                    "learns fastest at this lr (" +
                                        lesson::tick_text(setup.lr) + ")."
                                  : "With it the stack learns; at this lr (" +
                                        lesson::tick_text(setup.lr) +
                                        ") LayerNorm did not make it learn faster.");
    for (const Variant& v : variants)
      if (!std::isfinite(v.val_loss))
        caption.push_back("\"" + v.name +
                          "\" diverged: its curve ends where the loss stopped "
                          "being a number.");
    const std::string svg = svg_dir + "/transformer_block_loss.svg";
    nn::write_file_atomic(
        svg,
        lesson::svg_line_chart(
            curves, {.title = std::to_string(setup.n_layer) +
                              " transformer blocks trained four ways (the same data and draws)",
                     .x_label = "step",
                     .y_label = "training loss, mean of the last 10 steps",
                     .caption = caption,
                     .y_max = y_max,
                     .integer_x = true}));
    std::cout << "wrote " << svg << "\n";

    lesson::banner("Checks");
    lesson::expect_article(both.grad_norms[0] / both.grad_norms[last] > 0.5 &&
                               both.grad_norms[0] / both.grad_norms[last] < 2,
                           "with both, block 0 gets within 2x of the last block's gradient");
    lesson::expect_article(neither.grad_norms[0] / neither.grad_norms[last] < 1e-4,
                           "with neither, block 0's gradient is below 1e-4 of the last block's");
    lesson::expect_article(neither.spread < 0.05 && ln_only.spread < 0.05 && both.spread > 0.5 &&
                               res_only.spread > 0.5,
                           "without the residual path the positions blur into one (spread < "
                           "0.05); with it they stay apart (> 0.5)");
    const bool full_run = setup.steps >= 300;
    // What training achieves: the default run's claims, after its full 300 steps.
    const auto expect_trained = [&](bool ok, const std::string& what) {
      if (full_run)
        lesson::expect_article(ok, what);
      else
        lesson::expect_learned(false, false, what);
    };
    expect_trained(!(ln_only.val_loss < unigram - 0.1) && !(neither.val_loss < unigram - 0.1) &&
                       both.val_loss < unigram - 1,
                   "without the residual path val_loss stays near the character counts' (NaN "
                   "counts as not learning); with both it falls more than 1 below");
    expect_trained(both.val_loss < res_only.val_loss,
                   "at lr 1e-2 the stack with LayerNorm reaches the lower val_loss");
    lesson::exercises(
        {"15.1 block_forward: pre-LayerNorm, attention and MLP, with their residual adds"});
    return lesson::finish();
  });
}

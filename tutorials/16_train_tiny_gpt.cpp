// Lesson 16: train a tiny GPT, and watch what the causal mask is for.
//
// What you will learn:
//   - the whole next-token training loop: characters -> ids -> batches of (B, T) inputs and
//     their next characters as targets -> logits (B, T, V) -> cross-entropy -> backward ->
//     AdamW; T predictions per sequence, all trained at once;
//   - why that is only honest with the causal mask: without it, position t can read token t+1,
//     the very answer it is asked for. The training loss then falls towards zero, but a model
//     that generates text never has the next token to peek at, so its loss at the last position
//     (val_loss_last, all that generation sees) stays bad and its samples fall apart;
//   - how the attention maps look when the model has learned (an SVG, and one in the terminal).
//   - which attention runs: each block splits q, k and v into heads and calls
//     scaled_dot_product_attention, the core of lessons 09-12. For plain causal self-attention
//     the core picks a fused kernel that gives the same numbers in fewer passes (as PyTorch's
//     SDPA picks a backend); --fused 0 (or QKV_FUSED=0) runs the composed ops instead:
//     matmul, masked_fill, softmax, matmul. The printed losses are the same; only the speed
//     changes.
// What comes before: lessons 12 (causal masking) and 14 (a batched head).
// Run it: ./build/release/tutorials/16_train_tiny_gpt              (the built-in corpus)
//         ./build/release/tutorials/16_train_tiny_gpt --help       (every flag)
//
// Its PyTorch twin, tools/tiny_gpt_twin.py, mirrors it flag for flag (same split, batches,
// init, optimizer): run both with the same --data, --seed and sizes and compare their lines
// (tutorials/README.md, lesson 16, shows the commands).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "attention/all.h"
#include "tutorials/common/corpus.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/plot.h"

using namespace qkv;
using namespace qkv::attention;

namespace {

// ---- flags ----------------------------------------------------------------------------------

struct Options {
  std::string data;  // empty: the built-in corpus
  int64_t n_embd = 64, n_head = 4, n_layer = 2, block = 32, batch = 16, steps = 1500;
  int64_t seed = 1337, threads = 0, eval_batches = 20, log_every = 50, fused = 1;
  double lr = 1e-3;
  bool no_causal = false, no_compare = false;
  std::string save, load, svg_dir = ".", write_corpus;
  int64_t sample = 300, top_k = 0;
  double temperature = 0.8;
};

constexpr const char* kProgram = "16_train_tiny_gpt";

// The lesson's flags (tutorials/common/flags.h); --help lists them with their defaults.
lesson::Flags flags_for(Options& o) {
  lesson::Flags f(kProgram, "Train a tiny GPT on a text, then again without the mask.");
  f.text("--data", &o.data, "UTF-8 text to train on (default: the built-in corpus)");
  f.number("--n_embd", &o.n_embd, "embedding width C");
  f.number("--n_head", &o.n_head, "attention heads");
  f.number("--n_layer", &o.n_layer, "transformer blocks");
  f.number("--block", &o.block, "context length T");
  f.number("--batch", &o.batch, "sequences per batch B");
  f.number("--steps", &o.steps, "AdamW steps", 0);
  f.real("--lr", &o.lr, "AdamW's learning rate");
  f.number("--seed", &o.seed, "seed of the weights, batches and samples", 0);
  f.number("--threads", &o.threads, "worker threads; 0: QKV_NUM_THREADS or every core", 0);
  f.number("--eval_batches", &o.eval_batches, "validation batches");
  f.number("--log_every", &o.log_every, "steps between loss lines");
  f.number("--fused", &o.fused, "1: fused attention kernels; 0: the composed ops (QKV_FUSED)", 0,
           1);
  f.on_off("--no_causal", &o.no_causal, "train without the causal mask (the twin's flag too)");
  f.on_off("--no_compare", &o.no_compare, "skip the second, unmasked run the lesson compares");
  f.text("--save", &o.save, "write the weights (safetensors, PyTorch's names)");
  f.text("--load", &o.load, "start from these weights");
  f.number("--sample", &o.sample, "characters to generate", 0);
  f.real("--temperature", &o.temperature, "sampling temperature");
  f.number("--top_k", &o.top_k, "sample from the k likeliest; 0: from all", 0);
  f.text("--svg_dir", &o.svg_dir, "where the figures go");
  f.text("--write_corpus", &o.write_corpus, "write the built-in corpus here (for the twin), exit");
  return f;
}

// Errors after the flags are parsed (a file that cannot be read, a text too short): one line
// through lesson::run, exit status 1.
[[noreturn]] void fail(const std::string& message) {
  throw Error(message);
}

// ---- data -----------------------------------------------------------------------------------

std::string read_text(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("--data \"" + path + "\" does not exist");
  if (std::filesystem::is_directory(path, ec)) fail("--data \"" + path + "\" is a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("--data \"" + path + "\" cannot be read");
  std::ostringstream os;
  os << in.rdbuf();
  if (os.str().empty()) fail("--data \"" + path + "\" is empty");
  return os.str();
}

// ---- one training run -----------------------------------------------------------------------

struct RunResult {
  std::shared_ptr<GPT> model;
  std::vector<std::pair<double, double>> losses;  // (step, training loss)
  double train_loss = 0, val_loss = 0, val_loss_last = 0, step0_loss = 0;
  double tokens_per_s = 0, step_ms = 0;
  std::string sample;
};

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// A progress line on stderr (step, loss, tokens/s, time left), redrawn at most 4 times a second.
class Progress {
 public:
  explicit Progress(const Options& o) : o_(o) {}
  void update(int64_t step, double loss) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(250) && step + 1 != o_.steps) return;
    last_ = now;
    const double s = seconds(), done = static_cast<double>(step + 1);
    std::cerr << "\r  step " << step + 1 << "/" << o_.steps << "  loss " << format("%.4f", loss)
              << "  " << format("%.0f", done * static_cast<double>(o_.batch * o_.block) / s)
              << " tok/s  ETA " << format("%.0f", s / done * static_cast<double>(o_.steps) - s)
              << " s   " << std::flush;
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  ~Progress() {
    if (o_.steps > 0) std::cerr << "\r" << std::string(72, ' ') << "\r" << std::flush;
  }

 private:
  const Options& o_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

// The mean cross-entropy of `batches` batches from `data` (generator seeded `seed`), over all
// positions and at the last position alone (all that generation ever sees).
std::pair<double, double> evaluate(GPT& m, const Tensor& data, const Options& o, int64_t batches,
                                   uint64_t seed) {
  NoGradGuard no_grad;
  Generator g(seed);
  const int64_t N = o.batch * o.block, V = m.config.vocab_size;
  double all = 0, last = 0;
  for (int64_t i = 0; i < batches; ++i) {
    const Batch b = get_batch(data, o.block, o.batch, g);
    const Tensor logits = m(b.x);  // (B, T, V)
    all += cross_entropy(view(logits, {N, V}), view(b.y, {N})).item<float>();
    last += cross_entropy(contiguous(select(logits, 1, o.block - 1)),
                          contiguous(select(b.y, 1, o.block - 1)))
                .item<float>();
  }
  return {all / static_cast<double>(batches), last / static_cast<double>(batches)};
}

RunResult train(const Options& o, const CharTokenizer& tok, const TextSplit& split, bool causal,
                const std::string& label) {
  RunResult r;
  manual_seed(static_cast<uint64_t>(o.seed));  // model init draws from the default generator
  r.model = std::make_shared<GPT>(GPTConfig{.vocab_size = tok.vocab_size(),
                                            .n_embd = o.n_embd,
                                            .n_head = o.n_head,
                                            .n_layer = o.n_layer,
                                            .block = o.block,
                                            .causal = causal});
  GPT& m = *r.model;
  if (!o.load.empty()) try {
      nn::load(m, o.load);
    } catch (const Error& e) {
      fail("--load: " + std::string(e.what()));
    }
  nn::AdamW opt(m.parameters(), o.lr);         // betas (0.9, 0.999), eps 1e-8, weight_decay 0.01
  Generator g(static_cast<uint64_t>(o.seed));  // training batches: their own generator
  const int64_t N = o.batch * o.block, V = tok.vocab_size();
  std::cout << "\n--- training " << label << ": " << m.num_parameters() << " parameters, "
            << o.steps << " steps of " << o.batch << " x " << o.block << " tokens ---\n";
  Progress progress(o);
  for (int64_t step = 0; step < o.steps; ++step) {
    const Batch b = get_batch(split.train, o.block, o.batch, g);  // x, y (B, T); y: x moved by 1
    const Tensor logits = m(b.x);                                 // (B, T, V)
    const Tensor loss = cross_entropy(view(logits, {N, V}), view(b.y, {N}));
    const double value = loss.item<float>();
    r.losses.emplace_back(static_cast<double>(step), value);
    if (step % o.log_every == 0)
      std::cout << "step " << step << " loss " << format("%.4f", value) << std::endl;
    opt.zero_grad();
    backward(loss);
    opt.step();
    progress.update(step, value);
  }
  if (o.steps > 0) {
    r.tokens_per_s = static_cast<double>(N * o.steps) / progress.seconds();
    r.step_ms = 1000 * progress.seconds() / static_cast<double>(o.steps);
  }

  // The losses: training (the last step's; with --steps 0, one batch's, untrained) and validation.
  if (o.steps > 0) {
    r.step0_loss = r.losses.front().second;
    r.train_loss = r.losses.back().second;
  } else {
    r.step0_loss = r.train_loss = evaluate(m, split.train, o, 1, o.seed).first;
  }
  std::tie(r.val_loss, r.val_loss_last) = evaluate(m, split.val, o, o.eval_batches, 0);
  std::cout << "summary params=" << m.num_parameters() << " vocab=" << V
            << " train_loss=" << format("%.4f", r.train_loss)
            << " val_loss=" << format("%.4f", r.val_loss)
            << " val_loss_last=" << format("%.4f", r.val_loss_last)
            << " tokens_per_s=" << format("%.0f", r.tokens_per_s)
            << " step_ms=" << format("%.2f", r.step_ms) << "\n";
  if (o.sample > 0) {
    Generator gs(static_cast<uint64_t>(o.seed));
    const std::vector<int64_t> start = {split.val.to_vector<int64_t>()[0]};
    const SampleOptions so{.temperature = o.temperature, .top_k = o.top_k};
    r.sample = tok.decode(m.generate(start, o.sample, so, gs));
    std::cout << "sample (" << label << "):\n" << r.sample << "\n";
  }
  return r;
}

void write_or_fail(const std::string& path, const std::string& text) {
  try {
    nn::write_file_atomic(path, text);
  } catch (const Error& e) {
    fail(e.what());
  }
}

// Attention maps of one validation sequence: every head of every layer, and layer 0 head 0 in
// the terminal.
void show_attention(GPT& m, const CharTokenizer& tok, const TextSplit& split, const Options& o,
                    const std::string& path) {
  NoGradGuard no_grad;
  const int64_t T = std::min<int64_t>(o.block, 24);
  const Tensor x = view(contiguous(narrow(split.val, 0, 0, T)), {1, T});
  m(x);
  std::vector<std::string> labels;
  for (int64_t id : x.to_vector<int64_t>()) {
    std::string c = tok.decode({id});
    labels.push_back(c == "\n" ? "/" : c == " " ? "_" : c);
  }
  std::vector<Tensor> maps;
  std::vector<std::string> titles;
  for (int64_t l = 0; l < o.n_layer; ++l)
    for (int64_t h = 0; h < o.n_head; ++h) {
      maps.push_back(select(select(m.block(l).attention_weights, 0, 0), 0, h));
      titles.push_back("layer " + std::to_string(l) + " head " + std::to_string(h));
    }
  write_or_fail(path, lesson::svg_heatmaps(maps, titles, labels));
  std::cout << "layer 0, head 0 (" << (m.config.causal ? "causal" : "no mask")
            << "), darker = more attention; _ is a space, / a newline:\n"
            << lesson::terminal_heatmap(maps[0], labels);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.fused = fused_enabled() ? 1 : 0;  // the default: what QKV_FUSED says (tensor/fused.h)
  lesson::Flags flags = flags_for(o);
  return lesson::run(flags, argc, argv, [&] {
    if (o.n_embd % o.n_head != 0)
      flags.fail("--n_embd (" + std::to_string(o.n_embd) + ") must be divisible by --n_head (" +
                 std::to_string(o.n_head) + ")");
    if (!o.write_corpus.empty()) {
      write_or_fail(o.write_corpus, lesson::builtin_corpus());
      std::cout << "wrote the built-in corpus to " << o.write_corpus << "\n";
      return 0;
    }
    if (o.threads > 0) set_num_threads(static_cast<int>(o.threads));
    set_fused_enabled(o.fused == 1);  // tensor/fused.h; the same numbers either way
    const bool builtin = o.data.empty();
    const std::string text = builtin ? lesson::builtin_corpus() : read_text(o.data);
    std::unique_ptr<CharTokenizer> tok;
    Tensor ids;
    try {
      tok = std::make_unique<CharTokenizer>(text);
      ids = tok->encode(text);
    } catch (const Error& e) {
      fail("--data \"" + o.data + "\": " + e.what());
    }
    const TextSplit split = split_90_10(ids);
    if (split.val.size(0) < o.block + 2 || split.train.size(0) < o.block + 2)
      fail("the text is too short: its 90/10 split needs at least --block + 2 = " +
           std::to_string(o.block + 2) + " characters in each part, got " +
           std::to_string(split.train.size(0)) + " and " + std::to_string(split.val.size(0)));
    if (!o.save.empty()) {  // fail before training, not after, if the path cannot be written
      std::ofstream probe(o.save + ".probe", std::ios::binary);
      if (!probe) fail("--save \"" + o.save + "\" cannot be written");
      probe.close();
      std::filesystem::remove(o.save + ".probe");
    }
    std::cout << "data: " << (builtin ? std::string("the built-in corpus") : o.data) << ", "
              << ids.size(0) << " characters, vocabulary of " << tok->vocab_size() << ", "
              << split.train.size(0) << " train / " << split.val.size(0) << " validation\n"
              << "threads: " << num_threads() << "\n"
              << "attention: "
              << (fused_enabled() ? "the fused kernel (--fused 0: the composed ops)"
                                  : "the composed ops (--fused 1: the fused kernel)")
              << "\n";

    const bool causal = !o.no_causal;
    RunResult main_run =
        train(o, *tok, split, causal, causal ? "with the causal mask" : "without the mask");
    if (!o.save.empty()) {
      try {
        nn::save(*main_run.model, o.save);
      } catch (const Error& e) {
        fail(std::string("--save: ") + e.what());
      }
      std::cout << "saved the weights to " << o.save << " (safetensors, PyTorch's names)\n";
    }
    const std::string dir = o.svg_dir.empty() ? "." : o.svg_dir;
    std::vector<lesson::Series> curves = {
        {main_run.model->config.causal ? "causal" : "no mask", main_run.losses}};
    if (o.steps > 0)
      show_attention(*main_run.model, *tok, split, o, dir + "/tiny_gpt_attention.svg");

    // The lesson: the same model, the same batches, no mask.
    int cheat_gap = -1;  // did the unmasked run cheat as the lesson says? 1 yes, 0 no, -1 not run
    if (!o.no_compare && causal && o.steps > 0) {
      RunResult cheat = train(o, *tok, split, /*causal=*/false, "without the mask");
      curves.push_back({"no mask", cheat.losses});
      show_attention(*cheat.model, *tok, split, o, dir + "/tiny_gpt_attention_no_mask.svg");
      std::cout
          << "\n=== What the mask is for ===\n"
          << "                 causal   no mask\n"
          << "train_loss       " << format("%.4f", main_run.train_loss) << "   "
          << format("%.4f", cheat.train_loss) << "\n"
          << "val_loss         " << format("%.4f", main_run.val_loss) << "   "
          << format("%.4f", cheat.val_loss) << "\n"
          << "val_loss_last    " << format("%.4f", main_run.val_loss_last) << "   "
          << format("%.4f", cheat.val_loss_last) << "\n"
          << "Without the mask, position t sees token t+1, the answer it must predict, so the\n"
             "training loss (and val_loss, measured the same way) collapses. But at the last\n"
             "position there is no future token to copy: val_loss_last is what the model\n"
             "really knows, and it is all that generation ever sees. The unmasked model\n"
             "learned to copy instead of to predict, and its sample shows it.\n";
      if (cheat.val_loss >= main_run.val_loss || cheat.val_loss_last <= main_run.val_loss_last)
        std::cout << "(With this few steps the gap has not opened yet; try more --steps.)\n";
      if (o.steps >= 1000)
        cheat_gap =
            cheat.train_loss < main_run.train_loss && cheat.val_loss_last > main_run.val_loss_last;
    }
    if (o.steps > 0) {
      write_or_fail(
          dir + "/tiny_gpt_loss.svg",
          lesson::svg_line_chart(curves, "tiny GPT: training loss", "step", "cross-entropy"));
      std::cout << "figures: " << dir << "/tiny_gpt_loss.svg, " << dir
                << "/tiny_gpt_attention*.svg\n";
    }

    // The lesson checks its key numbers. On the built-in corpus with the default model and seed,
    // step 0 is the twin's loss: PyTorch computes 3.361330 for it (run tools/tiny_gpt_twin.py on
    // the file --write_corpus writes).
    lesson::banner("Checks");
    const bool default_setup = builtin && o.n_embd == 64 && o.n_head == 4 && o.n_layer == 2 &&
                               o.block == 32 && o.batch == 16 && o.seed == 1337 && o.load.empty();
    if (default_setup && o.steps > 0)
      lesson::expect(
          std::fabs(main_run.step0_loss - 3.361330) < 1e-4,
          "step-0 loss " + format("%.6f", main_run.step0_loss) + " equals PyTorch's 3.361330");
    if (o.steps >= 20)
      lesson::expect(main_run.losses.back().second < main_run.step0_loss - 0.5,
                     "the training loss fell by more than 0.5");
    if (cheat_gap >= 0)
      lesson::expect(cheat_gap == 1,
                     "without the mask: a lower training loss, but a higher val_loss_last");
    lesson::exercises({"16.1 adamw_step: one step of AdamW"});
    return lesson::finish();
  });
}

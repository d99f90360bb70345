// Lesson 15: train a tiny GPT, and watch what the causal mask is for.
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
// What comes before: lessons 12 (causal masking) and 14 (a batched head).
// Run it: ./build/release/tutorials/15_train_tiny_gpt              (the built-in corpus)
//         ./build/release/tutorials/15_train_tiny_gpt --help       (every flag)
//
// Its PyTorch twin, tools/tiny_gpt_twin.py, mirrors it flag for flag (same split, batches,
// init, optimizer): run both with the same --data, --seed and sizes and compare their lines
// (tutorials/README.md, lesson 15, shows the commands).
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
  int64_t seed = 1337, threads = 0, eval_batches = 20, log_every = 50;
  double lr = 1e-3;
  bool no_causal = false, compare = true;
  std::string save, load, svg_dir = ".", write_corpus;
  int64_t sample = 300, top_k = 0;
  double temperature = 0.8;
};

const char* kUsage =
    "usage: 15_train_tiny_gpt [--data FILE] [--n_embd 64] [--n_head 4] [--n_layer 2] [--block 32]\n"
    "         [--batch 16] [--steps 1500] [--lr 1e-3] [--seed 1337] [--threads N] [--eval_batches "
    "20]\n"
    "         [--log_every 50] [--no_causal] [--no_compare] [--save FILE] [--load FILE]\n"
    "         [--sample 300] [--temperature 0.8] [--top_k 0] [--svg_dir .] [--write_corpus FILE]\n"
    "  --data FILE        UTF-8 text to train on (default: the built-in corpus)\n"
    "  --no_causal        train without the causal mask (the twin's flag too)\n"
    "  --no_compare       skip the second, unmasked run that the lesson compares against\n"
    "  --save / --load    safetensors weights with the twin's state_dict names\n"
    "  --sample N         characters to generate (temperature, top_k: 0 = all)\n"
    "  --threads N        worker threads (default: QKV_NUM_THREADS or every core)\n"
    "  --write_corpus F   write the built-in corpus to F (to train the twin on it) and exit\n";

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "15_train_tiny_gpt: error: " << message << "\n";
  std::exit(2);
}

int64_t parse_int(const std::string& flag, const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) fail(flag + " expects an integer, got \"" + text + "\"");
  return v;
}

double parse_double(const std::string& flag, const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !std::isfinite(v))
    fail(flag + " expects a number, got \"" + text + "\"");
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  std::map<std::string, int64_t*> ints = {
      {"--n_embd", &o.n_embd},       {"--n_head", &o.n_head},   {"--n_layer", &o.n_layer},
      {"--block", &o.block},         {"--batch", &o.batch},     {"--steps", &o.steps},
      {"--seed", &o.seed},           {"--threads", &o.threads}, {"--eval_batches", &o.eval_batches},
      {"--log_every", &o.log_every}, {"--sample", &o.sample},   {"--top_k", &o.top_k}};
  std::map<std::string, double*> doubles = {{"--lr", &o.lr}, {"--temperature", &o.temperature}};
  std::map<std::string, std::string*> strings = {{"--data", &o.data},
                                                 {"--save", &o.save},
                                                 {"--load", &o.load},
                                                 {"--svg_dir", &o.svg_dir},
                                                 {"--write_corpus", &o.write_corpus}};
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (flag == "--no_causal") {
      o.no_causal = true;
      continue;
    }
    if (flag == "--no_compare") {
      o.compare = false;
      continue;
    }
    const bool known = ints.count(flag) || doubles.count(flag) || strings.count(flag);
    if (!known) fail("unknown flag \"" + flag + "\" (see --help)");
    if (i + 1 >= argc) fail(flag + " needs a value");
    const std::string value = argv[++i];
    if (ints.count(flag))
      *ints[flag] = parse_int(flag, value);
    else if (doubles.count(flag))
      *doubles[flag] = parse_double(flag, value);
    else
      *strings[flag] = value;
  }
  for (auto [name, v] :
       std::vector<std::pair<const char*, int64_t>>{{"--n_embd", o.n_embd},
                                                    {"--n_head", o.n_head},
                                                    {"--n_layer", o.n_layer},
                                                    {"--block", o.block},
                                                    {"--batch", o.batch},
                                                    {"--eval_batches", o.eval_batches},
                                                    {"--log_every", o.log_every}})
    if (v <= 0) fail(std::string(name) + " must be positive, got " + std::to_string(v));
  if (o.steps < 0 || o.sample < 0 || o.top_k < 0 || o.threads < 0)
    fail("--steps, --sample, --top_k and --threads must be >= 0");
  if (o.n_embd % o.n_head != 0)
    fail("--n_embd (" + std::to_string(o.n_embd) + ") must be divisible by --n_head (" +
         std::to_string(o.n_head) + ")");
  if (!(o.lr > 0)) fail("--lr must be positive");
  if (!(o.temperature > 0)) fail("--temperature must be positive");
  if (o.seed < 0) fail("--seed must be >= 0");
  return o;
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

RunResult train(const Options& o, const CharTokenizer& tok, const TextSplit& split, bool causal,
                const std::string& label) {
  RunResult r;
  manual_seed(static_cast<uint64_t>(o.seed));  // model init draws from the default generator
  GPTConfig config{.vocab_size = tok.vocab_size(),
                   .n_embd = o.n_embd,
                   .n_head = o.n_head,
                   .n_layer = o.n_layer,
                   .block = o.block,
                   .causal = causal};
  r.model = std::make_shared<GPT>(config);
  GPT& m = *r.model;
  if (!o.load.empty()) {
    try {
      nn::load(m, o.load);
    } catch (const Error& e) {
      fail("--load: " + std::string(e.what()));
    }
  }
  nn::AdamW opt(m.parameters(), o.lr);         // betas (0.9, 0.999), eps 1e-8, weight_decay 0.01
  Generator g(static_cast<uint64_t>(o.seed));  // training batches: their own generator
  const int64_t V = tok.vocab_size();
  std::cout << "\n--- training " << label << ": " << m.num_parameters() << " parameters, "
            << o.steps << " steps of " << o.batch << " x " << o.block << " tokens ---\n";
  const auto t0 = std::chrono::steady_clock::now();
  auto last_progress = t0;
  Tensor loss;
  for (int64_t step = 0; step < o.steps; ++step) {
    const Batch b = get_batch(split.train, o.block, o.batch, g);
    const Tensor logits = m(b.x);  // (B, T, V)
    loss = cross_entropy(view(logits, {o.batch * o.block, V}), raw::view(b.y, {o.batch * o.block}));
    const double value = loss.item<float>();
    if (step == 0) r.step0_loss = value;
    if (step % o.log_every == 0)
      std::cout << "step " << step << " loss " << format("%.4f", value) << std::endl;
    r.losses.emplace_back(static_cast<double>(step), value);
    opt.zero_grad();
    backward(loss);
    opt.step();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress > std::chrono::milliseconds(250) || step + 1 == o.steps) {
      last_progress = now;
      const double s = std::chrono::duration<double>(now - t0).count();
      const double tps = static_cast<double>((step + 1) * o.batch * o.block) / s;
      const double eta =
          s / static_cast<double>(step + 1) * static_cast<double>(o.steps - step - 1);
      std::cerr << "\r  step " << step + 1 << "/" << o.steps << "  loss " << format("%.4f", value)
                << "  " << format("%.0f", tps) << " tok/s  ETA " << format("%.0f", eta) << " s   "
                << std::flush;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.steps > 0) std::cerr << "\r" << std::string(72, ' ') << "\r" << std::flush;
  r.tokens_per_s = o.steps > 0 ? static_cast<double>(o.batch * o.block * o.steps) / seconds : 0;
  r.step_ms = o.steps > 0 ? 1000 * seconds / static_cast<double>(o.steps) : 0;

  // Validation: eval_batches fixed batches (a generator seeded 0), all positions and the last.
  Generator gv(0);
  double tot = 0, last = 0;
  {
    NoGradGuard no_grad;
    for (int64_t i = 0; i < o.eval_batches; ++i) {
      const Batch b = get_batch(split.val, o.block, o.batch, gv);
      const Tensor logits = m(b.x);
      tot += cross_entropy(raw::view(logits, {o.batch * o.block, V}),
                           raw::view(b.y, {o.batch * o.block}))
                 .item<float>();
      last += cross_entropy(raw::contiguous(raw::select(logits, 1, o.block - 1)),
                            raw::contiguous(raw::select(b.y, 1, o.block - 1)))
                  .item<float>();
    }
    r.train_loss = loss.defined() ? loss.item<float>() : 0;
    r.val_loss = tot / static_cast<double>(o.eval_batches);
    r.val_loss_last = last / static_cast<double>(o.eval_batches);
    if (!loss.defined()) {  // --steps 0: report the loss of one training batch, untrained
      Generator g0(static_cast<uint64_t>(o.seed));
      const Batch b = get_batch(split.train, o.block, o.batch, g0);
      r.train_loss = r.step0_loss = cross_entropy(raw::view(m(b.x), {o.batch * o.block, V}),
                                                  raw::view(b.y, {o.batch * o.block}))
                                        .item<float>();
    }
  }
  std::cout << "summary params=" << m.num_parameters() << " vocab=" << V
            << " train_loss=" << format("%.4f", r.train_loss)
            << " val_loss=" << format("%.4f", r.val_loss)
            << " val_loss_last=" << format("%.4f", r.val_loss_last)
            << " tokens_per_s=" << format("%.0f", r.tokens_per_s)
            << " step_ms=" << format("%.2f", r.step_ms) << "\n";
  if (o.sample > 0) {
    Generator gs(static_cast<uint64_t>(o.seed));
    const std::vector<int64_t> start = {split.val.to_vector<int64_t>()[0]};
    SampleOptions so{.temperature = o.temperature, .top_k = o.top_k};
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
  const Tensor x = raw::view(raw::contiguous(raw::narrow(split.val, 0, 0, T)), {1, T});
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
      maps.push_back(raw::select(raw::select(m.block(l).attention_weights, 0, 0), 0, h));
      titles.push_back("layer " + std::to_string(l) + " head " + std::to_string(h));
    }
  write_or_fail(path, lesson::svg_heatmaps(maps, titles, labels));
  std::cout << "layer 0, head 0 (" << (m.config.causal ? "causal" : "no mask")
            << "), darker = more attention; _ is a space, / a newline:\n"
            << lesson::terminal_heatmap(maps[0], labels);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (!o.write_corpus.empty()) {
    write_or_fail(o.write_corpus, lesson::builtin_corpus());
    std::cout << "wrote the built-in corpus to " << o.write_corpus << "\n";
    return 0;
  }
  if (o.threads > 0) set_num_threads(static_cast<int>(o.threads));
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
            << "threads: " << num_threads() << "\n";

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
  if (o.steps > 0) show_attention(*main_run.model, *tok, split, o, dir + "/tiny_gpt_attention.svg");

  // The lesson: the same model, the same batches, no mask.
  int cheat_gap = -1;  // did the unmasked run cheat as the lesson says? 1 yes, 0 no, -1 not run
  if (o.compare && causal && o.steps > 0) {
    RunResult cheat = train(o, *tok, split, false, "without the mask");
    curves.push_back({"no mask", cheat.losses});
    show_attention(*cheat.model, *tok, split, o, dir + "/tiny_gpt_attention_no_mask.svg");
    std::cout << "\n=== What the mask is for ===\n"
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
  return lesson::finish();
}

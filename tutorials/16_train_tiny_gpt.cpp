// Lesson 16: train a tiny GPT, and watch what the causal mask is for.
//
// What you will learn:
//   - the whole next-token training loop: characters -> ids -> batches of (B, T) inputs and
//     their next characters as targets -> logits (B, T, V) -> cross-entropy -> backward ->
//     AdamW; T predictions per sequence, all trained at once;
//   - why that is only honest with the causal mask: without it, position t can read token t+1,
//     the very answer it is asked for. The training loss then falls towards zero, but at the
//     last position of a window there is no next token to copy, so the loss there (val_loss_last,
//     what generation meets once its context is full) stays bad and the samples fall apart.
//     tiny_gpt_loss.svg draws the three losses of both runs side by side;
//   - how the attention maps look when the model has learned (tiny_gpt_attention*.svg, a grid of
//     layers x heads, and layer 0's first head in the terminal);
//   - how a run is stopped and resumed: --save writes one checkpoint file (the weights, AdamW's
//     moments and step, the batch generator, the model's config and the vocabulary); Ctrl-C
//     finishes the step under way and saves; --resume continues with exactly the losses an
//     uninterrupted run prints; --load samples from a saved model with no other flag;
//   - which attention runs: each block splits q, k and v into heads and calls
//     scaled_dot_product_attention, the core of lessons 09-12. For plain causal self-attention
//     the core picks a fused kernel that gives the same numbers in fewer passes (as PyTorch's
//     SDPA picks a backend); --fused 0 (or QKV_FUSED=0) runs the composed ops instead:
//     matmul, masked_fill, softmax, matmul. The printed losses are the same; only the speed
//     changes.
// What comes before: lessons 12 (causal masking), 14 (a batched head), 15 (the block).
// Run it: ./build/release/tutorials/16_train_tiny_gpt              (the built-in corpus)
//         ./build/release/tutorials/16_train_tiny_gpt --help       (every flag)
//
// Its PyTorch twin, tools/tiny_gpt_twin.py, mirrors it flag for flag (same split, batches,
// init, optimizer, evaluations): run both with the same --data, --seed and sizes and compare
// their lines (tutorials/README.md, lesson 16, shows the commands).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
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
  int64_t seed = 1337, threads = 0, eval_batches = 20, eval_every = 100, log_every = 50;
  int64_t warmup_steps = 0, decay_steps = 0, fused = 1;
  double lr = 1e-3;
  bool no_causal = false, no_compare = false;
  std::string save, resume, load, prompt, svg_dir = ".", write_corpus;
  int64_t save_every = 500, sample = 300, top_k = 0;
  double temperature = 0.8;
};

constexpr const char* kProgram = "16_train_tiny_gpt";
// The figures the lesson writes into --svg_dir.
constexpr const char* kFigures[] = {"tiny_gpt_loss.svg", "tiny_gpt_attention.svg",
                                    "tiny_gpt_attention_no_mask.svg"};
// Where Ctrl-C saves the run when no --save was given.
constexpr const char* kInterruptedPath = "tiny_gpt_interrupted.safetensors";

// The lesson's flags (tutorials/common/flags.h); --help lists them with their defaults.
lesson::Flags flags_for(Options& o) {
  lesson::Flags f(kProgram, "Train a tiny GPT on a text, then again without the causal mask.");
  f.path("--data", &o.data, "UTF-8 text to train on (default: the built-in corpus)");
  f.number("--n_embd", &o.n_embd, "embedding width C", 1, 4096);
  f.number("--n_head", &o.n_head, "attention heads (must divide C)", 1, 4096);
  f.number("--n_layer", &o.n_layer, "transformer blocks", 1, 1024);
  f.number("--block", &o.block, "context length T", 1, 65536);
  f.number("--batch", &o.batch, "sequences per batch B", 1, 65536);
  f.number("--steps", &o.steps, "AdamW steps in all (with --resume: the step to stop at)", 0,
           100'000'000);
  f.real("--lr", &o.lr, "AdamW's learning rate", 0, 10);
  f.number("--warmup_steps", &o.warmup_steps, "steps of linear warmup to --lr (0: none)", 0,
           100'000'000);
  f.number("--decay_steps", &o.decay_steps,
           "cosine decay to --lr / 10 at this step (0: a constant --lr)", 0, 100'000'000);
  f.number("--seed", &o.seed, "seed of the weights, batches and samples", 0);
  f.number("--threads", &o.threads, "worker threads; 0: QKV_NUM_THREADS or every core", 0, 1024);
  f.number("--eval_batches", &o.eval_batches, "batches each evaluation averages over", 1, 100'000);
  f.number("--eval_every", &o.eval_every, "steps between evaluations (the loss figure's points)", 1,
           100'000'000);
  f.number("--log_every", &o.log_every, "steps between loss lines", 1, 100'000'000);
  f.number("--fused", &o.fused, "1: fused attention kernels; 0: the composed ops (QKV_FUSED)", 0,
           1);
  f.on_off("--no_causal", &o.no_causal, "train without the causal mask (the twin's flag too)");
  f.on_off("--no_compare", &o.no_compare, "skip the second, unmasked run the lesson compares");
  f.path("--save", &o.save, "write a checkpoint of the run here, to resume or sample from");
  f.number("--save_every", &o.save_every, "steps between checkpoints (and one at the end)", 1,
           100'000'000);
  f.path("--resume", &o.resume, "continue the run a --save checkpoint holds, to --steps");
  f.path("--load", &o.load,
         "start from a checkpoint's model (or a file of weights), with a fresh optimizer");
  f.number("--sample", &o.sample, "characters to generate after training", 0, 1'000'000);
  f.nonempty_text("--prompt", &o.prompt,
         "text the sample starts from (default: the validation text's "
         "first character)");
  f.real("--temperature", &o.temperature, "sampling temperature", 0, 100);
  f.number("--top_k", &o.top_k, "sample from the k likeliest; 0: from all", 0);
  f.output_folder("--svg_dir", &o.svg_dir, "where the figures go");
  f.path("--write_corpus", &o.write_corpus, "write the built-in corpus here (for the twin), exit");
  return f;
}

// An error of this program: one line through lesson::run, "16_train_tiny_gpt: error: ...".
template <class... Parts>
void require(bool ok, const Parts&... parts) {
  if (ok) return;
  std::ostringstream os;
  (os << ... << parts);
  throw Error(os.str());
}

// ---- data -----------------------------------------------------------------------------------

// The training text: a regular file of at most 256 MiB (each character becomes an 8-byte id,
// and a character model learns nothing more from a gigabyte than from this).
std::string read_text(const std::string& path) {
  constexpr uint64_t kMaxText = uint64_t{256} << 20;
  const std::string text = nn::read_file(path, "--data", kMaxText);
  require(!text.empty(), "--data: a text to train on, got \"", path, "\": an empty file");
  return text;
}

// A fingerprint of the training text (64-bit FNV-1a), so that a resumed run can tell whether
// it is given the text it was trained on.
std::string fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// Characters as a learner reads them in a message: 'a', '\n', U+00E9 'é'.
std::string shown(char32_t c) {
  if (c == '\n') return "'\\n'";
  if (c == '\t') return "'\\t'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(c));
  return c < 0x20 ? std::string(buf) : "'" + encode_utf8({c}) + "'";
}

// The characters of `text` that `tok` has no id for, listed (at most 8), or "" if none.
std::string missing_characters(const CharTokenizer& tok, const std::string& text) {
  const std::vector<char32_t> known = tok.chars();
  std::vector<char32_t> missing;
  const CharTokenizer in_text(text);
  for (const char32_t c : in_text.chars())
    if (!std::binary_search(known.begin(), known.end(), c)) missing.push_back(c);
  std::string out;
  for (size_t i = 0; i < missing.size() && i < 8; ++i) out += (i ? ", " : "") + shown(missing[i]);
  if (missing.size() > 8) out += " and " + std::to_string(missing.size() - 8) + " more";
  return out;
}

// ---- one training run -----------------------------------------------------------------------

// What a run has measured so far, kept in its checkpoint so that a resumed run's figure shows
// the whole run.
struct History {
  std::vector<float> train_loss;  // every step's batch loss, before its update
  struct Eval {
    float step, train, val, val_last;
  };
  std::vector<Eval> evals;  // every --eval_every steps and at the end
};

struct Run {
  std::string label;  // "causal" or "no mask"
  std::shared_ptr<GPT> model;
  std::unique_ptr<nn::AdamW> opt;
  Generator batches{0};  // draws the training batches
  History history;
  double tokens_per_s = 0, step_ms = 0;
};

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// A progress line on stderr (step, loss, tokens/s, time left), redrawn at most 4 times a second
// when stderr is a terminal.
class Progress {
 public:
  Progress(int64_t first, int64_t last, int64_t tokens_per_step)
      : first_(first), last_(last), tokens_(tokens_per_step) {}
  void update(int64_t step, double loss) {
    if (!shown_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - drawn_ < std::chrono::milliseconds(250) && step + 1 != last_) return;
    drawn_ = now;
    const double s = seconds(), done = static_cast<double>(step + 1 - first_);
    std::cerr << "\r  step " << step + 1 << "/" << last_ << "  loss " << format("%.4f", loss)
              << "  " << format("%.0f", done * static_cast<double>(tokens_) / s) << " tok/s  ETA "
              << format("%.0f", std::max(0.0, s / done * static_cast<double>(last_ - first_) - s))
              << " s   " << std::flush;
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  ~Progress() {
    if (shown_ && last_ > first_) std::cerr << "\r" << std::string(72, ' ') << "\r" << std::flush;
  }

 private:
  int64_t first_, last_, tokens_;
  bool shown_ = lesson::stderr_is_terminal();
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), drawn_ = start_;
};

// The mean cross-entropy of `batches` batches from `data` (generator seeded `seed`), over all
// positions and at the last position of each window alone.
std::pair<double, double> evaluate(GPT& m, const Tensor& data, const Options& o, uint64_t seed) {
  NoGradGuard no_grad;
  Generator g(seed);
  const int64_t N = o.batch * o.block, V = m.config.vocab_size;
  double all = 0, last = 0;
  for (int64_t i = 0; i < o.eval_batches; ++i) {
    const Batch b = get_batch(data, o.block, o.batch, g);
    const Tensor logits = m(b.x);  // (B, T, V)
    all += cross_entropy(view(logits, {N, V}), view(b.y, {N})).item<float>();
    last += cross_entropy(contiguous(select(logits, 1, o.block - 1)),
                          contiguous(select(b.y, 1, o.block - 1)))
                .item<float>();
  }
  const auto n = static_cast<double>(o.eval_batches);
  return {all / n, last / n};
}

// One evaluation for the loss figure: the training text (its own fixed batches, seed 1) and the
// validation text (seed 0, the batches of the summary line), printed as one line.
void record_eval(Run& run, int64_t step, const TextSplit& split, const Options& o) {
  auto& evals = run.history.evals;
  if (evals.empty() || evals.back().step != static_cast<float>(step)) {  // not yet measured
    const double train = evaluate(*run.model, split.train, o, 1).first;
    const auto [val, val_last] = evaluate(*run.model, split.val, o, 0);
    evals.push_back({static_cast<float>(step), static_cast<float>(train), static_cast<float>(val),
                     static_cast<float>(val_last)});
  }
  std::cout << "eval step " << step << ": train " << format("%.4f", evals.back().train) << " val "
            << format("%.4f", evals.back().val) << " val_last "
            << format("%.4f", evals.back().val_last) << std::endl;
}

// The learning rate of a step: --lr, or its warmup and cosine decay (to --lr / 10 at
// --decay_steps) when those are set. A function of the step alone, so a resumed run carries on
// the schedule from the step its checkpoint holds.
double lr_at(const Options& o, int64_t step) {
  if (o.warmup_steps == 0 && o.decay_steps == 0) return o.lr;
  const int64_t total = std::max(o.decay_steps, o.warmup_steps);
  return nn::WarmupCosine{.base_lr = o.lr,
                          .min_lr = o.decay_steps > 0 ? o.lr / 10 : o.lr,
                          .warmup_steps = o.warmup_steps,
                          .total_steps = total}
      .lr(step);
}

// A new model and optimizer for a run, drawn from --seed as the twin draws them.
Run new_run(const GPTConfig& config, const Options& o) {
  Run r;
  r.label = config.causal ? "causal" : "no mask";
  manual_seed(static_cast<uint64_t>(o.seed));  // model init draws from the default generator
  r.model = std::make_shared<GPT>(config);
  r.opt = std::make_unique<nn::AdamW>(r.model->parameters(), o.lr);  // betas (0.9, 0.999),
                                                                     // eps 1e-8, decay 0.01
  r.batches = Generator(static_cast<uint64_t>(o.seed));              // training batches: their own
  return r;
}

// Trains `run` from the optimizer's step count to o.steps. Returns false if Ctrl-C stopped it
// (after the step under way, which is kept; main holds the lesson::InterruptGuard); `save` is
// called every --save_every steps.
bool train(Run& run, const TextSplit& split, const Options& o, const std::function<void()>& save) {
  GPT& m = *run.model;
  const int64_t N = o.batch * o.block, V = m.config.vocab_size;
  const int64_t first = run.opt->steps();
  Progress progress(first, o.steps, N);
  for (int64_t step = first; step < o.steps; ++step) {
    if (step % o.eval_every == 0) record_eval(run, step, split, o);
    run.opt->set_lr(lr_at(o, step));
    const Batch b = get_batch(split.train, o.block, o.batch, run.batches);  // x, y (B, T)
    const Tensor logits = m(b.x);                                           // (B, T, V)
    const Tensor loss = cross_entropy(view(logits, {N, V}), view(b.y, {N}));
    const double value = loss.item<float>();
    // A loss that is no longer a number ends the run before it is saved or stepped on.
    require(std::isfinite(value), "step ", step, ": the loss is ",
            std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf",
            ": training diverged (try a smaller --lr); this step is not saved");
    run.history.train_loss.push_back(static_cast<float>(value));
    if (step % o.log_every == 0)
      std::cout << "step " << step << " loss " << format("%.4f", value) << std::endl;
    run.opt->zero_grad();
    backward(loss);
    run.opt->step();
    progress.update(step, value);
    if (lesson::InterruptGuard::interrupted()) return false;
    if ((step + 1) % o.save_every == 0 && step + 1 < o.steps) save();
  }
  if (o.steps > first) {
    run.tokens_per_s = static_cast<double>(N * (o.steps - first)) / progress.seconds();
    run.step_ms = 1000 * progress.seconds() / static_cast<double>(o.steps - first);
  }
  record_eval(run, o.steps, split, o);  // the end of the run (measured once, printed always)
  return true;
}

// ---- checkpoints ----------------------------------------------------------------------------
// A checkpoint (nn/checkpoint.h) holds the model, AdamW's state and step, the batch generator,
// and as extras: the model's config, the vocabulary, the run's settings and its history.

std::string run_json(const Options& o, const std::string& data_name, const std::string& text) {
  std::ostringstream os;
  os.precision(17);
  os << "{\"batch\": " << o.batch << ", \"lr\": " << o.lr
     << ", \"warmup_steps\": " << o.warmup_steps << ", \"decay_steps\": " << o.decay_steps
     << ", \"seed\": " << o.seed << ", \"eval_batches\": " << o.eval_batches
     << ", \"eval_every\": " << o.eval_every << ", \"log_every\": " << o.log_every
     << ", \"no_compare\": " << (o.no_compare ? "true" : "false") << ", \"steps\": " << o.steps
     << ", \"data\": " << nn::json_escape(data_name) << ", \"data_characters\": " << text.size()
     << ", \"data_fingerprint\": \"" << fingerprint(text) << "\"}";
  return os.str();
}

void save_run(const std::string& path, const Run& run, const CharTokenizer& tok, const Options& o,
              const std::string& data_name, const std::string& text) {
  nn::CheckpointExtras extras;
  extras.metadata = {{"config", gpt_config_json(run.model->config)},
                     {"vocabulary", tok.vocabulary()},
                     {"run", run_json(o, data_name, text)}};
  const auto n_train = static_cast<int64_t>(run.history.train_loss.size());
  const auto n_eval = static_cast<int64_t>(run.history.evals.size());
  std::vector<float> evals;
  for (const History::Eval& e : run.history.evals)
    evals.insert(evals.end(), {e.step, e.train, e.val, e.val_last});
  extras.tensors = {{"history.train_loss", from_vector(run.history.train_loss, {n_train})},
                    {"history.eval", from_vector(evals, {n_eval, 4})}};
  nn::save_checkpoint(path, *run.model, *run.opt, run.batches, extras);
}

// A checkpoint's run: its config and vocabulary, checked against the flags the learner gave.
struct Saved {
  nn::Checkpoint file;
  GPTConfig config;
  std::unique_ptr<CharTokenizer> tok;
  nn::Json run;  // the settings it was trained with (a JSON object)
};

Saved read_saved(const std::string& path, const lesson::Flags& flags, const Options& o) {
  Saved s;
  s.file = nn::read_checkpoint(path);
  s.config = gpt_config_from_json(s.file.metadata("config"), path);
  const std::string& vocabulary = s.file.metadata("vocabulary");
  s.tok = std::make_unique<CharTokenizer>(vocabulary);
  require(s.tok->vocabulary() == vocabulary && s.tok->vocab_size() == s.config.vocab_size, "\"",
          path, "\": a vocabulary of ", s.config.vocab_size,
          " distinct characters in order, got one that is not");
  s.run = nn::parse_json(s.file.metadata("run"), ("\"" + path + "\": its run settings").c_str());
  require(s.run.kind == nn::Json::Kind::object, "\"", path, "\": run settings as a JSON object");
  // Every parameter the config implies, and no more: checked before a model is built.
  int64_t held = 0;
  for (const auto& [name, t] : s.file.model) held += t.numel();
  require(held == gpt_num_parameters(s.config), "\"", path, "\": its config makes ",
          gpt_num_parameters(s.config), " parameters, the file holds ", held);
  // An architecture flag given on the command line must say what the checkpoint says.
  const std::pair<const char*, std::pair<int64_t, int64_t>> sizes[] = {
      {"--n_embd", {o.n_embd, s.config.n_embd}},
      {"--n_head", {o.n_head, s.config.n_head}},
      {"--n_layer", {o.n_layer, s.config.n_layer}},
      {"--block", {o.block, s.config.block}}};
  for (const auto& [flag, values] : sizes)
    if (flags.given(flag) && values.first != values.second)
      flags.fail("\"" + path + "\" holds a model with " + std::string(flag + 2) + " " +
                 std::to_string(values.second) + ", but " + flag + " says " +
                 std::to_string(values.first));
  if (flags.given("--no_causal") && o.no_causal == s.config.causal)
    flags.fail("\"" + path + "\" holds a model trained " + (s.config.causal ? "with" : "without") +
               " the causal mask, but --no_causal says " + (o.no_causal ? "without" : "with"));
  return s;
}

// A setting the run settings of a checkpoint hold: a number in [min, max], or a whole number
// read exactly (a seed above 2^53 does not fit a double).
const nn::Json& run_member(const Saved& s, const std::string& key) {
  const nn::Json* v = nn::json_member(s.run, key);
  require(v != nullptr, "\"", s.file.path, "\": a run setting \"", key, "\", got none");
  return *v;
}
double run_setting(const Saved& s, const std::string& key, double min, double max) {
  return nn::json_number(run_member(s, key), ("\"" + s.file.path + "\"").c_str(),
                         "\"" + key + "\"", min, max);
}
int64_t run_setting(const Saved& s, const std::string& key, int64_t min, int64_t max) {
  const int64_t n =
      nn::json_index(run_member(s, key), ("\"" + s.file.path + "\"").c_str(), "\"" + key + "\"");
  require(n >= min && n <= max, "\"", s.file.path, "\": run setting \"", key, "\" in [", min,
          ", ", max, "], got ", n);
  return n;
}

// The history a checkpoint holds (extras "history.train_loss" and "history.eval"), checked
// whole: a float32 loss for each step the optimizer has taken, and evaluations (step, train,
// val, val_last) at increasing steps no later than its own, every number finite. Kept: the
// evaluations a run to step `stop` makes every `eval_every` steps, and one at `stop`.
History read_history(const nn::Checkpoint& c, int64_t eval_every, int64_t stop) {
  const Tensor* train = nullptr;
  const Tensor* eval = nullptr;
  for (const auto& [name, t] : c.extras.tensors) {
    if (name == "history.train_loss") train = &t;
    if (name == "history.eval") eval = &t;
  }
  require(train && train->dtype() == Dtype::float32 && train->dim() == 1 &&
              train->size(0) == c.step,
          "\"", c.path, "\": history.train_loss of float32 (", c.step, "), one loss per step, got ",
          train ? dtype_name(train->dtype()) + " " + shape_str(train->shape()) : "none");
  require(eval && eval->dtype() == Dtype::float32 && eval->dim() == 2 && eval->size(1) == 4,
          "\"", c.path, "\": history.eval of float32 (N, 4), got ",
          eval ? dtype_name(eval->dtype()) + " " + shape_str(eval->shape()) : "none");
  History h;
  h.train_loss = train->to_vector<float>();
  for (const float loss : h.train_loss)
    require(std::isfinite(loss), "\"", c.path, "\": history.train_loss holds ", loss);
  const std::vector<float> v = eval->to_vector<float>();
  for (size_t i = 0; i + 4 <= v.size(); i += 4) {
    const History::Eval e{v[i], v[i + 1], v[i + 2], v[i + 3]};
    require(std::isfinite(e.train) && std::isfinite(e.val) && std::isfinite(e.val_last) &&
                e.step >= 0 && e.step <= static_cast<float>(c.step) && e.step == std::floor(e.step) &&
                (h.evals.empty() || e.step > h.evals.back().step),
            "\"", c.path, "\": history.eval row ", i / 4,
            " (step, train, val, val_last) with a whole step after the last row's and no later "
            "than ", c.step, ", and finite losses, got (", e.step, ", ", e.train, ", ", e.val,
            ", ", e.val_last, ")");
    // The evaluation that ended a shorter run is not one an uninterrupted run to `stop` makes.
    if (static_cast<int64_t>(e.step) % eval_every == 0 || static_cast<int64_t>(e.step) == stop)
      h.evals.push_back(e);
  }
  return h;
}

// Every setting a checkpoint's run holds, each read as its flag reads it (flags_for: the same
// ranges), and no key the lesson does not write: the whole record is checked, for --load as
// for --resume, so that a file with one bad value is refused whichever way it is used.
struct SavedSettings {
  Options o;                     // batch, lr, schedule, seed, evaluations, steps, no_compare
  std::string data;              // the text's absolute path, or "the built-in corpus"
  int64_t data_characters = 0;   // its size in bytes
  std::string data_fingerprint;  // fingerprint() of it
};

SavedSettings read_settings(const Saved& saved) {
  const std::string& path = saved.file.path;
  static const char* known[] = {"batch",      "lr",           "warmup_steps", "decay_steps",
                                "seed",       "eval_batches", "eval_every",   "log_every",
                                "no_compare", "steps",        "data",         "data_characters",
                                "data_fingerprint"};
  for (const nn::JsonMember& m : saved.run.members)
    require(std::find_if(std::begin(known), std::end(known),
                         [&](const char* k) { return m.key == k; }) != std::end(known),
            "\"", path, "\": run settings the lesson writes, got an unknown one \"", m.key, "\"");
  SavedSettings r;
  Options& o = r.o;
  o.batch = run_setting(saved, "batch", int64_t{1}, int64_t{65536});
  o.lr = run_setting(saved, "lr", -HUGE_VAL, HUGE_VAL);
  require(o.lr > 0 && o.lr <= 10, "\"", path, "\": run setting \"lr\" in (0, 10], got ", o.lr);
  o.warmup_steps = run_setting(saved, "warmup_steps", int64_t{0}, int64_t{100'000'000});
  o.decay_steps = run_setting(saved, "decay_steps", int64_t{0}, int64_t{100'000'000});
  o.seed = run_setting(saved, "seed", int64_t{0}, INT64_MAX);
  o.eval_batches = run_setting(saved, "eval_batches", int64_t{1}, int64_t{100'000});
  o.eval_every = run_setting(saved, "eval_every", int64_t{1}, int64_t{100'000'000});
  o.log_every = run_setting(saved, "log_every", int64_t{1}, int64_t{100'000'000});
  o.steps = run_setting(saved, "steps", int64_t{0}, int64_t{100'000'000});
  const nn::Json& no_compare = run_member(saved, "no_compare");
  require(no_compare.kind == nn::Json::Kind::boolean, "\"", path,
          "\": run setting \"no_compare\" true or false, got another value");
  o.no_compare = no_compare.boolean;
  const nn::Json& data = run_member(saved, "data");
  const nn::Json& fingerprint_of = run_member(saved, "data_fingerprint");
  require(data.kind == nn::Json::Kind::string && !data.text.empty() &&
              fingerprint_of.kind == nn::Json::Kind::string && fingerprint_of.text.size() == 16,
          "\"", path, "\": run settings \"data\" (a path) and \"data_fingerprint\" (16 hex "
          "digits), got others");
  r.data = data.text;
  r.data_fingerprint = fingerprint_of.text;
  r.data_characters = run_setting(saved, "data_characters", int64_t{1}, int64_t{256} << 20);
  require(o.steps >= saved.file.step, "\"", path, "\": run setting \"steps\" at least the ",
          saved.file.step, " steps taken, got ", o.steps);
  return r;
}

// What a checkpoint fixes for the run that uses it: the model's sizes and mask; the text it
// was trained on, unless --data names another; and for --resume, every setting of the run
// (batch, learning rate and schedule, seed, evaluations, the step to stop at), unless a flag
// given says otherwise, and the file to keep saving to.
void take_saved_settings(const Saved& saved, const SavedSettings& s, const lesson::Flags& flags,
                         Options& o) {
  o.n_embd = saved.config.n_embd, o.n_head = saved.config.n_head;
  o.n_layer = saved.config.n_layer, o.block = saved.config.block;
  o.no_causal = !saved.config.causal;
  if (!flags.given("--data")) {
    o.data = s.data == "the built-in corpus" ? "" : s.data;
    std::error_code ec;
    require(o.data.empty() || std::filesystem::exists(o.data, ec), "\"", saved.file.path,
            "\" was trained on \"", o.data, "\", which is not there: name the text with --data");
  }
  if (o.resume.empty()) return;
  const auto take = [&](const char* flag, auto Options::*member) {
    if (!flags.given(flag)) o.*member = s.o.*member;
  };
  take("--batch", &Options::batch);
  take("--lr", &Options::lr);
  take("--warmup_steps", &Options::warmup_steps);
  take("--decay_steps", &Options::decay_steps);
  take("--seed", &Options::seed);
  take("--eval_batches", &Options::eval_batches);
  take("--eval_every", &Options::eval_every);
  take("--log_every", &Options::log_every);
  take("--steps", &Options::steps);
  take("--no_compare", &Options::no_compare);
  if (!flags.given("--save")) o.save = o.resume;  // the run keeps its file
}

// ---- figures --------------------------------------------------------------------------------

// The three losses of each run, as the figure draws them.
void add_curves(std::vector<lesson::Series>& curves, const Run& run, const std::string& colour) {
  lesson::Series train{.name = run.label + ": training loss", .colour = colour, .width = 1.2},
      val{.name = run.label + ": validation loss", .colour = colour, .dash = "6 4"},
      last{.name = run.label + ": last-position loss",
           .colour = colour,
           .dash = "2 3",
           .width = 2.5};
  for (const History::Eval& e : run.history.evals) {
    train.points.emplace_back(e.step, e.train);
    val.points.emplace_back(e.step, e.val);
    last.points.emplace_back(e.step, e.val_last);
  }
  for (lesson::Series* s : {&train, &val, &last}) {
    s->markers = true;
    curves.push_back(*s);
  }
}

// Attention maps of one validation sequence: every head of every layer in one grid, and
// layer 0 head 0 in the terminal.
void show_attention(GPT& m, const CharTokenizer& tok, const TextSplit& split, const Options& o,
                    const std::string& path, const std::string& label, int64_t step) {
  NoGradGuard no_grad;
  const int64_t T = std::min<int64_t>(o.block, 24);
  const Tensor x = view(contiguous(narrow(split.val, 0, 0, T)), {1, T});
  m(x);
  std::vector<std::string> labels, terminal_labels;
  for (int64_t id : x.to_vector<int64_t>()) {
    labels.push_back(lesson::char_label(tok.decode({id}), false));
    terminal_labels.push_back(lesson::char_label(tok.decode({id}), true));
  }
  lesson::HeatmapGrid grid{
      .title = "tiny GPT, " + std::string(label == "causal" ? "causal mask" : "no mask") +
               ", after step " + std::to_string(step) +
               ": the attention weights of every head on the first " + std::to_string(T) +
               " validation characters",
      .row_labels = labels,
      .column_labels = labels,
      .caption = {label == "causal"
                      ? "Each row sums to 1 over the keys at or before its position; the mask "
                        "leaves 0 above the diagonal."
                      : "No mask: a row may read the keys after its position, the very token "
                        "it is asked to predict among them.",
                  lesson::kCharLabelKey},
      .scale_max = 1};
  for (int64_t l = 0; l < m.config.n_layer; ++l) {
    grid.row_titles.push_back("layer " + std::to_string(l));
    grid.maps.emplace_back();
    for (int64_t h = 0; h < m.config.n_head; ++h)
      grid.maps.back().push_back(select(select(m.block(l).attention_weights, 0, 0), 0, h));
  }
  for (int64_t h = 0; h < m.config.n_head; ++h)
    grid.column_titles.push_back("head " + std::to_string(h));
  nn::write_file_atomic(path, lesson::svg_heatmap_grid(grid));
  std::cout << "layer 0, head 0 (" << label << "), darker = more attention; _ is a space, / a "
            << "newline:\n"
            << lesson::terminal_heatmap(grid.maps[0][0], terminal_labels);
}

// Summary line, then a sample from the prompt.
void report(Run& run, const CharTokenizer& tok, const TextSplit& split, const Options& o,
            const std::vector<int64_t>& prompt) {
  GPT& m = *run.model;
  const History::Eval& end = run.history.evals.back();
  const double train_loss = run.history.train_loss.empty()
                                ? evaluate(m, split.train, o, o.seed).first
                                : run.history.train_loss.back();
  std::cout << "summary params=" << m.num_parameters() << " vocab=" << m.config.vocab_size
            << " train_loss=" << format("%.4f", train_loss)
            << " val_loss=" << format("%.4f", end.val)
            << " val_loss_last=" << format("%.4f", end.val_last)
            << " tokens_per_s=" << format("%.0f", run.tokens_per_s)
            << " step_ms=" << format("%.2f", run.step_ms) << "\n";
  if (o.sample > 0) {
    Generator gs(static_cast<uint64_t>(o.seed));
    const SampleOptions so{.temperature = o.temperature, .top_k = o.top_k};
    std::cout << "sample (" << (run.label == "causal" ? "with the causal mask" : "without the mask")
              << "):\n"
              << tok.decode(m.generate(prompt, o.sample, so, gs)) << "\n";
  }
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
    if (!o.resume.empty() && !o.load.empty())
      flags.fail(
          "--resume and --load exclude each other: --resume continues a run, --load "
          "starts a new one from a saved model");
    if (!o.write_corpus.empty()) {
      nn::write_file_atomic(o.write_corpus, lesson::builtin_corpus());
      std::cout << "wrote the built-in corpus to " << o.write_corpus << "\n";
      return 0;
    }
    if (o.threads > 0) set_num_threads(static_cast<int>(o.threads));
    set_fused_enabled(o.fused == 1);  // tensor/fused.h; the same numbers either way

    // A checkpoint to resume or to start from: read and checked whole before anything else.
    const std::string from = o.resume.empty() ? o.load : o.resume;
    std::unique_ptr<Saved> saved;
    SavedSettings settings;
    if (!from.empty()) {
      try {
        saved = std::make_unique<Saved>(read_saved(from, flags, o));
      } catch (const Error&) {
        // A file of weights alone (nn::save's, PyTorch's: no "format" in its metadata) can
        // start a run with --load; a file that says it is a checkpoint must be a whole one.
        bool checkpoint = true;
        try {
          checkpoint = nn::load_safetensors(from).metadata.count("format") != 0;
        } catch (const Error&) {  // not a safetensors file at all: the first error says so
        }
        if (!o.resume.empty() || checkpoint) throw;
      }
    }
    if (saved) {
      // The rest of the file, checked whether it is resumed or loaded: its settings, its
      // history, and AdamW's state and the generator's, restored into a scratch run.
      settings = read_settings(*saved);
      read_history(saved->file, settings.o.eval_every, settings.o.steps);
      Run scratch = new_run(saved->config, o);
      nn::restore_checkpoint(saved->file, *scratch.model, *scratch.opt, scratch.batches);
      take_saved_settings(*saved, settings, flags, o);
    }

    // The text, and the vocabulary: the text's own, or the checkpoint's.
    const bool builtin = o.data.empty();
    const std::string data_name = builtin ? "the built-in corpus" : o.data;
    const std::string data_title =  // for figure titles: the file's name without its folders
        builtin ? data_name : std::filesystem::path(o.data).filename().string();
    const std::string text = builtin ? lesson::builtin_corpus() : read_text(o.data);
    if (saved && settings.data_fingerprint == fingerprint(text))  // the text it names: its size too
      require(settings.data_characters == static_cast<int64_t>(text.size()), "\"", from,
              "\": run setting \"data_characters\" ", settings.data_characters,
              ", but its text has ", text.size());
    std::unique_ptr<CharTokenizer> tok;
    try {
      tok = std::make_unique<CharTokenizer>(text);
    } catch (const Error& e) {
      throw Error("--data \"" + o.data + "\": " + e.what());
    }
    if (saved) {
      const std::string missing = missing_characters(*saved->tok, text);
      if (!missing.empty())
        throw Error(data_name + " has characters the vocabulary of \"" + from +
                    "\" lacks: " + missing);
      if (!o.resume.empty() && tok->vocabulary() != saved->tok->vocabulary())
        throw Error("\"" + from + "\" was trained on a text of " +
                    std::to_string(saved->tok->vocab_size()) + " distinct characters, " +
                    data_name + " has " + std::to_string(tok->vocab_size()) +
                    ": resume on the same text, or --load to train on another");
      tok = std::move(saved->tok);
    }
    const Tensor ids = tok->encode(text);
    const TextSplit split = split_90_10(ids);
    if (split.val.size(0) < o.block + 2 || split.train.size(0) < o.block + 2)
      throw Error("the text is too short: its 90/10 split needs at least --block + 2 = " +
                  std::to_string(o.block + 2) + " characters in each part, got " +
                  std::to_string(split.train.size(0)) + " and " +
                  std::to_string(split.val.size(0)));
    // The prompt must be made of the vocabulary's characters (checked before training).
    std::vector<int64_t> prompt = {split.val.to_vector<int64_t>()[0]};
    if (!o.prompt.empty()) {
      std::string missing;
      try {
        missing = missing_characters(*tok, o.prompt);
      } catch (const Error& e) {  // not UTF-8
        flags.fail("--prompt: " + std::string(e.what()));
      }
      if (!missing.empty())
        flags.fail("--prompt has characters outside the vocabulary" +
                   (from.empty() ? std::string() : " of \"" + from + "\"") + ": " + missing +
                   " (it has " + std::to_string(tok->vocab_size()) + " characters)");
      prompt = tok->encode(o.prompt).to_vector<int64_t>();
    }
    // Where the run writes: checked before training, not after.
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!o.save.empty()) {
      if (fs::is_directory(o.save, ec))
        flags.fail("--save \"" + o.save + "\" is a folder: name the file to write");
      if (!builtin && fs::equivalent(o.save, o.data, ec))
        flags.fail("--save \"" + o.save + "\" is the training text (--data): it would be "
                   "overwritten");
      nn::check_writable(o.save, "--save");
    }
    const std::string& dir = o.svg_dir;  // made and found writable as the flags were read
    for (const char* figure : kFigures)  // the checkpoint must not be a file a figure replaces
      if (!o.save.empty() &&
          fs::weakly_canonical(o.save, ec) == fs::weakly_canonical(fs::path(dir) / figure, ec))
        flags.fail("--save \"" + o.save + "\" is where the figure " + figure +
                   " goes (--svg_dir): name another file");
    std::cout << "data: " << data_name << ", " << ids.size(0) << " characters, vocabulary of "
              << tok->vocab_size() << ", " << split.train.size(0) << " train / "
              << split.val.size(0) << " validation\n"
              << "threads: " << num_threads() << "\n"
              << "attention: "
              << (fused_enabled() ? "the fused kernel (--fused 0: the composed ops)"
                                  : "the composed ops (--fused 1: the fused kernel)")
              << "\n";

    // The main run: new, resumed, or started from a saved model.
    const GPTConfig config{.vocab_size = tok->vocab_size(),
                           .n_embd = o.n_embd,
                           .n_head = o.n_head,
                           .n_layer = o.n_layer,
                           .block = o.block,
                           .causal = !o.no_causal};
    Run run = new_run(saved ? saved->config : config, o);
    if (saved && !o.resume.empty()) {
      nn::restore_checkpoint(saved->file, *run.model, *run.opt, run.batches);
      run.history = read_history(saved->file, o.eval_every, o.steps);
      if (settings.data_fingerprint != fingerprint(text))
        std::cout << "(" << data_name << " is not the text this run was trained on: from here "
                  << "the losses differ from an uninterrupted run's)\n";
      std::cout << "resumed " << from << " at step " << run.opt->steps() << " of " << o.steps
                << "\n";
    } else if (saved) {
      // The model alone: a fresh optimizer and history.
      nn::copy_into_parameters(nn::match_state_dict(*run.model, saved->file.model, from.c_str()));
      std::cout << "loaded the model of " << from << "\n";
    } else if (!o.load.empty()) {
      nn::load(*run.model, o.load);  // a file of weights alone, for the model the flags describe
      std::cout << "loaded the weights of " << o.load << "\n";
    }
    if (run.opt->steps() > o.steps)
      flags.fail("--steps " + std::to_string(o.steps) + " is below the " +
                 std::to_string(run.opt->steps()) + " steps \"" + from + "\" has already run");

    // The checkpoint names its text by absolute path, so a run resumed elsewhere finds it.
    const std::string data_path =
        builtin ? data_name : std::filesystem::absolute(o.data).lexically_normal().string();
    auto save = [&](const std::string& path) { save_run(path, run, *tok, o, data_path, text); };
    // From here Ctrl-C finishes what is under way (a step, a save) and the run is kept: the
    // guard lives until the end, so a checkpoint is never cut off half-written.
    lesson::InterruptGuard ctrl_c;
    const auto stopped = [&](const std::string& what) {
      std::cout << "interrupted " << what << "\n";
      return 130;  // 128 + SIGINT, what a shell reports for a program stopped by Ctrl-C
    };
    const int64_t first_step = run.opt->steps();
    if (o.steps > first_step)
      std::cout << "\n--- training "
                << (run.model->config.causal ? "with the causal mask" : "without the mask") << ": "
                << run.model->num_parameters() << " parameters, "
                << (first_step == 0 ? "" : "steps " + std::to_string(first_step) + " to ")
                << o.steps << (first_step == 0 ? " steps" : "") << " of " << o.batch << " x "
                << o.block << " tokens ---\n";
    else
      std::cout << "\n--- the model as it is, "
                << (run.model->config.causal ? "with the causal mask" : "without the mask") << ": "
                << run.model->num_parameters() << " parameters, no steps to train ---\n";
    if (!train(run, split, o, [&] {
          if (!o.save.empty()) save(o.save);
        })) {
      const std::string path = o.save.empty() ? kInterruptedPath : o.save;
      save(path);
      return stopped("after step " + std::to_string(run.opt->steps() - 1) + ": saved the run to " +
                     path + "; continue it with --resume " + path);
    }
    if (!o.save.empty()) {
      save(o.save);
      std::cout << "saved the run to " << o.save << " (resume with --resume " << o.save
                << ", sample with --load " << o.save << " --steps 0)\n";
    }
    if (lesson::InterruptGuard::interrupted())
      return stopped(o.save.empty() ? std::string("after training")
                                    : "after training: the run is saved at " + o.save);
    report(run, *tok, split, o, prompt);
    std::vector<std::string> figures;  // the files written, named in one line at the end
    if (o.steps > 0) {
      show_attention(*run.model, *tok, split, o, dir + "/tiny_gpt_attention.svg", run.label,
                     o.steps);
      figures.push_back(dir + "/tiny_gpt_attention.svg");
    }

    // The lesson: the same model, the same batches, no mask.
    std::vector<lesson::Series> curves;
    add_curves(curves, run, "#1f77b4");
    int cheat_gap = -1;  // did the unmasked run cheat as the lesson says? 1 yes, 0 no, -1 not run
    std::string gap_caption;  // the figure's words on the comparison, from its numbers
    const bool compare = !o.no_compare && run.model->config.causal && o.steps > 0 && o.load.empty();
    if (compare) {
      GPTConfig unmasked = run.model->config;
      unmasked.causal = false;
      Run cheat = new_run(unmasked, o);
      std::cout << "\n--- training without the mask: the same model, batches and steps ---\n";
      if (!train(cheat, split, o, [] {}))
        return stopped("during the run without the mask" +
                       (o.save.empty() ? std::string() : "; the causal run is saved at " + o.save));
      report(cheat, *tok, split, o, prompt);
      add_curves(curves, cheat, "#d62728");
      show_attention(*cheat.model, *tok, split, o, dir + "/tiny_gpt_attention_no_mask.svg",
                     cheat.label, o.steps);
      figures.push_back(dir + "/tiny_gpt_attention_no_mask.svg");
      // Both runs measured alike: each evaluation averages --eval_batches fixed batches.
      const History::Eval &a = run.history.evals.back(), &b = cheat.history.evals.back();
      std::cout << "\n=== What the mask is for (after step " << o.steps << ", "
                << o.eval_batches << " batches each) ===\n"
                << "                 causal   no mask\n"
                << "train_loss       " << format("%.4f", a.train) << "   "
                << format("%.4f", b.train) << "\n"
                << "val_loss         " << format("%.4f", a.val) << "   " << format("%.4f", b.val)
                << "\n"
                << "val_loss_last    " << format("%.4f", a.val_last) << "   "
                << format("%.4f", b.val_last) << "\n"
                << "Without the mask, position t sees token t+1, the answer it must predict. At\n"
                   "the last position of a window there is no next token to see: val_loss_last\n"
                   "is what the model knows, and once its context is full, all that generation\n"
                   "sees.\n";
      const bool opened = b.train < a.train && b.val < a.val && b.val_last > a.val_last;
      if (opened)
        std::cout << "Here the unmasked run is the lower on whole windows (val_loss "
                  << format("%.4f", b.val) << " against\n"
                  << format("%.4f", a.val) << ") but the higher at the last position ("
                  << format("%.4f", b.val_last) << " against " << format("%.4f", a.val_last)
                  << "): it learned\nto copy the next token more than to predict it. Compare "
                     "the two samples above.\n";
      else
        std::cout << "In this run the gap has not opened: the unmasked run is not lower on whole\n"
                     "windows and higher at the last position. Try more --steps.\n";
      if (o.steps >= 1000) cheat_gap = opened;
      gap_caption =
          opened ? "Without the mask (red) the loss on whole windows falls lower than with it (" +
                       format("%.2f", b.val) + " against " + format("%.2f", a.val) +
                       " on validation) by copying the next token, but at the last position it "
                       "is higher (" +
                       format("%.2f", b.val_last) + " against " + format("%.2f", a.val_last) +
                       "): there it learned less about what comes next."
                 : "Without the mask (red) the gap has not opened in " + std::to_string(o.steps) +
                       " steps: it is not lower on whole windows and higher at the last "
                       "position.";
    }
    if (o.steps > 0) {
      std::vector<std::string> caption = {
          "Solid: the loss on training windows; dashed: on validation windows; dotted: at the "
          "last position of each validation window, where no later token exists to copy."};
      if (!gap_caption.empty()) caption.push_back(gap_caption);
      nn::write_file_atomic(
          dir + "/tiny_gpt_loss.svg",
          lesson::svg_line_chart(
              curves,
              {.title = "tiny GPT on " + data_title + ": " +
                        (compare ? "with and without the causal mask" : run.label + " run"),
               .x_label = "step",
               .y_label = "cross-entropy (mean of " + std::to_string(o.eval_batches) + " batches)",
               .caption = caption,
               .integer_x = true}));
      figures.insert(figures.begin(), dir + "/tiny_gpt_loss.svg");
    }
    if (!figures.empty()) {
      std::cout << "figures:";
      for (const std::string& f : figures) std::cout << " " << f;
      std::cout << "\n";
    }

    // The lesson checks its key numbers. On the built-in corpus with the default model and
    // seed, step 0 is the twin's loss: PyTorch computes 3.361330 for it (run
    // tools/tiny_gpt_twin.py on the file --write_corpus writes).
    lesson::banner("Checks");
    const bool default_setup = builtin && o.n_embd == 64 && o.n_head == 4 && o.n_layer == 2 &&
                               o.block == 32 && o.batch == 16 && o.seed == 1337 && o.load.empty();
    const std::vector<float>& losses = run.history.train_loss;
    if (default_setup && !losses.empty())
      lesson::expect(
          std::fabs(losses.front() - 3.361330) < 1e-4,
          "step-0 loss " + format("%.6f", losses.front()) + " equals PyTorch's 3.361330");
    if (losses.size() >= 20)
      lesson::expect(losses.back() < losses.front() - 0.5,
                     "the training loss fell by more than 0.5");
    if (cheat_gap >= 0)
      lesson::expect(cheat_gap == 1,
                     "without the mask: a lower training loss, but a higher val_loss_last");
    lesson::exercises({"16.1 adamw_step: one step of AdamW"});
    return lesson::finish();
  });
}

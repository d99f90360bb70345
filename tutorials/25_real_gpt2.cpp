// Lesson 25: the real GPT-2: its tokenizer, its weights, its first layer's attention, and
// its next words.
//
// What you will learn: how a prompt reaches a trained model and what the model makes of it.
//   - GPT-2's byte-level BPE (attention/bpe_tokenizer.h): with GPT-2's vocabulary, "It’s very
//     hot in summer. Swimming is" becomes 12 tokens, It / âĢ / Ļ / s / Ġvery / ..., where Ġ is
//     a space and "’" (three UTF-8 bytes) is split over two tokens, âĢ and Ļ. The tokenizer
//     needs only its two files: --tokenizer DIR prints the tokens without any weights;
//   - each token's row of wte plus its position's row of wpe, and the first LayerNorm: the
//     article's table, three columns of each;
//   - layer 0's attention for one head, computed by hand from those rows and held to the
//     model's own weights, and how much of it falls on the first token;
//   - the most likely next tokens and a greedy continuation, with the KV cache.
// Lesson 18 built this layer's shapes with random weights; here they are GPT-2's own.
// What comes before: lessons 12 (causal attention), 16 (a GPT), 18 (GPT-2's layer), 19 (the KV
// cache).
//
// GPT-2 small (124M parameters, 548 MB) is not in the repository. Get its four files from
// Hugging Face's gpt2 repository, https://huggingface.co/openai-community/gpt2 (Files):
// config.json, model.safetensors, vocab.json and merges.txt, into one folder, then
//   ./build/release/tutorials/25_real_gpt2 --model that_folder --top_logits 5 --generate 20
// Without --model the lesson runs on a tiny GPT-2 with random weights that it writes itself in
// the same layout (so every line runs in CI, and the numbers mean nothing).
// Run it: ./build/release/tutorials/25_real_gpt2 [--model DIR] [--prompt TEXT] [--print_ids]
//         [--top_logits K] [--generate N] [--head H]
//         ./build/release/tutorials/25_real_gpt2 --tokenizer DIR [--prompt TEXT] [--print_ids]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "attention/all.h"
#include "tutorials/common/corpus.h"
#include "tutorials/common/lesson.h"

using namespace qkv;
using namespace qkv::attention;

namespace {

const char* kProgram = "25_real_gpt2";

struct Options {
  std::string model;      // empty: the tiny random GPT-2
  std::string tokenizer;  // a folder of tokenizer files alone: the tokens, no model
  std::string prompt = "It\u2019s very hot in summer. Swimming is";  // the article's
  bool print_ids = false;
  int64_t top_logits = 5, generate = 10, head = 0;
  std::string write_tiny;  // write the tiny GPT-2's files here and exit
};

lesson::Flags flags_for(Options& o) {
  lesson::Flags f(kProgram, "GPT-2 from its own files: tokens, embeddings, attention, next words");
  f.path("--model", &o.model,
         "a GPT-2 folder: config.json, model.safetensors, vocab.json, merges.txt");
  f.path("--tokenizer", &o.tokenizer,
         "only the tokens, from a folder with vocab.json + merges.txt (or encoder.json + "
         "vocab.bpe): no weights needed");
  f.nonempty_text("--prompt", &o.prompt, "the text to run");
  f.on_off("--print_ids", &o.print_ids, "print the prompt's token ids on one line");
  f.number("--top_logits", &o.top_logits, "the last position's K most likely next tokens", 0);
  f.number("--generate", &o.generate, "tokens to generate greedily (temperature 0)", 0);
  f.number("--head", &o.head, "the head of layer 0 whose attention is shown", 0);
  f.path("--write_tiny", &o.write_tiny, "write the tiny random GPT-2's four files here, exit");
  return f;
}

// A folder that is removed when the lesson ends, for the tiny model's files.
class ScratchFolder {
 public:
  ScratchFolder() {
    const auto tick = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = std::filesystem::temp_directory_path() / ("qkv_tiny_gpt2_" + std::to_string(tick));
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A tiny GPT-2 in Hugging Face's layout: a BPE vocabulary learned from lesson 16's corpus (256
// bytes, up to 300 merges: learning stops early once every piece of the text is one token,
// and <|endoftext|>) and random weights (attention/gpt2.h), written as vocab.json, merges.txt,
// config.json and model.safetensors.
void write_tiny_gpt2(const std::string& dir) {
  const BpeTokenizer tok = BpeTokenizer::train(lesson::builtin_corpus(20'000), 300);
  tok.save(dir);
  const GPTConfig config = gpt2_config(
      {.vocab_size = tok.vocab_size(), .n_embd = 32, .n_head = 2, .n_layer = 2, .n_positions = 64});
  nn::save_safetensors(dir + "/model.safetensors", random_gpt2_weights(config, 2019));
  nn::write_file_atomic(dir + "/config.json", gpt2_config_json(config));
}

// Bytes as they print, quoted: UTF-8 characters as they are, \n and \t spelled out, and any
// other control byte or byte that is not part of a whole UTF-8 character as \xNN (a token may
// hold half a character: ’ is split over two).
std::string printable(const std::string& bytes) {
  std::string out = "\"";
  for (size_t i = 0; i < bytes.size();) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    const size_t n = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    bool whole = lead >= 32 && i + n <= bytes.size();
    try {
      if (whole) nn::decode_utf8(bytes.substr(i, n));
    } catch (const Error&) {
      whole = false;
    }
    if (lead == '\n' || lead == '\t') {
      out += lead == '\n' ? "\\n" : "\\t";
    } else if (whole) {
      out += bytes.substr(i, n);
      i += n;
      continue;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", lead);
      out += hex;
    }
    ++i;
  }
  return out + "\"";
}

// Ids as text, printable: a model whose vocab_size is padded past its tokenizer's (nanoGPT's
// 50304 for GPT-2's 50257) can pick an id the tokenizer has no token for, shown as <id N>.
std::string shown_ids(const BpeTokenizer& tok, const std::vector<int64_t>& ids) {
  std::string out;
  std::vector<int64_t> run;  // ids the tokenizer knows, decoded together (a character may span two)
  const auto flush = [&] {
    if (!run.empty()) out += printable(tok.decode(run));
    run.clear();
  };
  for (const int64_t id : ids) {
    if (id < tok.vocab_size()) {
      run.push_back(id);
      continue;
    }
    flush();
    out += "<id " + std::to_string(id) + ">";
  }
  flush();
  return out.empty() ? "\"\"" : out;
}

// s padded with spaces to `width` characters (not bytes: "Ġ" is one character, two bytes).
std::string padded(const std::string& s, size_t width) {
  const size_t chars = nn::decode_utf8(s).size();
  return s + std::string(chars < width ? width - chars : 0, ' ');
}

std::string first3(const Tensor& row) {  // "[ 0.0123, -0.4567,  0.0089]"
  const std::vector<float> v = row.to_vector<float>();
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%7.4f, %7.4f, %7.4f]", v[0], v[1], v[2]);
  return buf;
}

// Section 2: the prompt as GPT-2's tokens.
std::vector<int64_t> show_tokens(const BpeTokenizer& tok, const std::string& prompt,
                                 bool print_ids) {
  const std::vector<int64_t> ids = tok.encode(prompt);
  std::printf("%s -> %zu tokens\n", printable(prompt).c_str(), ids.size());
  std::printf("  pos     id  symbol            text\n");
  for (size_t t = 0; t < ids.size(); ++t)
    std::printf("  %3zu %6lld  %s  %s\n", t, static_cast<long long>(ids[t]),
                padded(tok.symbol(ids[t]), 16).c_str(), printable(tok.decode({ids[t]})).c_str());
  std::cout << "(a symbol spells the token's bytes one character each: Ġ is a space, and\n"
               "bytes that are not printable on their own, like the three of ’, get stand-ins)\n";
  if (print_ids) {
    std::cout << "ids:";
    for (const int64_t id : ids) std::cout << " " << id;
    std::cout << "\n";
  }
  lesson::expect(tok.decode(ids) == prompt,
                 "decoding the ids gives back the prompt, byte for byte");
  return ids;
}

// Section 3: the article's table: wte[id][:3], wpe[t][:3], their sum x, and ln_1(x)[:3].
void show_embeddings(GPT& model, const BpeTokenizer& tok, const std::vector<int64_t>& ids) {
  const int64_t T = static_cast<int64_t>(ids.size());
  const Tensor wte = index_select(model.tok->weight, 0, from_vector(ids, {T}));  // (T, C)
  const Tensor wpe = narrow(model.pos->weight, 0, 0, T);                         // (T, C)
  const Tensor x = add(wte, wpe);
  const Tensor ln = model.block(0).ln1->forward(x);
  std::printf("  %-12s %-26s %-26s %-26s %s\n", "token", "wte[:3]", "wpe[:3]", "x = sum [:3]",
              "ln_1(x) [:3]");
  for (int64_t t = 0; t < T; ++t)
    std::printf("  %s %s %s %s %s\n", padded(tok.symbol(ids[static_cast<size_t>(t)]), 12).c_str(),
                first3(select(wte, 0, t)).c_str(), first3(select(wpe, 0, t)).c_str(),
                first3(select(x, 0, t)).c_str(), first3(select(ln, 0, t)).c_str());
  // LayerNorm by its formula, for the last row: (x - mean) / sqrt(var + eps) * gain + shift.
  const std::vector<float> xs = select(x, 0, T - 1).to_vector<float>();
  double mean = 0, var = 0;
  for (const float v : xs) mean += v / static_cast<double>(xs.size());
  for (const float v : xs) var += (v - mean) * (v - mean) / static_cast<double>(xs.size());
  const std::vector<float> g = model.block(0).ln1->weight.to_vector<float>();
  const std::vector<float> b = model.block(0).ln1->bias.to_vector<float>();
  const std::vector<float> got = select(ln, 0, T - 1).to_vector<float>();
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i)
    worst = std::max(
        worst, std::fabs((xs[i] - mean) / std::sqrt(var + model.config.layer_norm_eps) * g[i] +
                         b[i] - got[i]));
  std::printf("last row: mean %.4f, variance %.4f; max |formula - ln_1| = %.1e\n", mean, var,
              worst);
  lesson::expect(worst < 1e-4, "ln_1 is (x - mean) / sqrt(var + eps) * gain + shift");
}

// Section 4: layer 0's attention for one head, by hand from ln_1(x), held to what the model ran
// over the prompt (main's forward, after which block 0 keeps its attention weights).
void show_attention(GPT& model, const BpeTokenizer& tok, const std::vector<int64_t>& ids,
                    int64_t head, bool real) {
  const int64_t T = static_cast<int64_t>(ids.size()), C = model.config.n_embd;
  const int64_t D = C / model.config.n_head;
  Block& block = model.block(0);
  const Tensor x = model.tok->forward(from_vector(ids, {1, T})) + model.pos->forward(arange(T));
  const Tensor h = block.ln1->forward(x);  // (1, T, C)
  // The head's rows of W_q and W_k (Linear stores (out, in)) and their biases.
  auto project = [&](nn::Linear& lin) {
    return linear(h, narrow(lin.weight, 0, head * D, D), narrow(lin.bias, 0, head * D, D));
  };
  const Tensor scores = div(matmul(project(*block.q), transpose(project(*block.k), 1, 2)),
                            static_cast<float>(std::sqrt(static_cast<double>(D))));
  const Tensor by_hand = select(
      softmax(masked_fill(scores, logical_not(causal_mask(T)), -INFINITY), -1), 0, 0);  // (T, T)
  const Tensor ran = select(select(block.attention_weights, 0, 0), 0, head);
  const double diff = max(abs(sub(by_hand, ran))).item<float>();
  std::printf("layer 0, head %lld: softmax(mask(q k^T / sqrt(%lld))), rows are queries:\n",
              static_cast<long long>(head), static_cast<long long>(D));
  const std::vector<float> w = ran.to_vector<float>();
  for (int64_t i = 0; i < T; ++i) {
    std::printf("  %s", padded(tok.symbol(ids[static_cast<size_t>(i)]), 12).c_str());
    for (int64_t j = 0; j <= i; ++j) std::printf(" %4.2f", w[static_cast<size_t>(i * T + j)]);
    std::printf("\n");
  }
  lesson::expect(diff < 1e-5, "by hand from wte, wpe and ln_1, the head's weights are the model's");
  // How much of each row falls on the first token, against spreading it evenly.
  double first = 0, even = 0;
  for (int64_t i = 1; i < T; ++i) {
    first += w[static_cast<size_t>(i * T)] / static_cast<double>(T - 1);
    even += 1.0 / static_cast<double>(i + 1) / static_cast<double>(T - 1);
  }
  if (T > 1)
    std::printf(
        "rows 1..%lld put on average %.2f of their weight on the first token (spread "
        "evenly: %.2f)\n",
        static_cast<long long>(T - 1), first, even);
  std::cout << (real ? "The article notes that layer 0's head 0 pays the first position special\n"
                       "attention: on the article's prompt its table puts 0.42 of rows 1-11's\n"
                       "weight on \"It\" on average. Try --head 1 to 11 for the other heads.\n"
                     : "(random weights learn nothing, so no head favours the first token here;\n"
                       "with --model and GPT-2 small's files, see what layer 0's heads do)\n");
}

// Section 5: the last position's most likely next tokens, from the logits (1, T, V).
int64_t show_top_logits(const Tensor& logits_of_prompt, const BpeTokenizer& tok, int64_t k) {
  const int64_t T = logits_of_prompt.size(1);
  const Tensor last = select(select(logits_of_prompt, 0, 0), 0, T - 1);
  const std::vector<float> logits = last.to_vector<float>();
  std::vector<int64_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)];
  });
  for (int64_t r = 0; r < std::min<int64_t>(k, static_cast<int64_t>(order.size())); ++r) {
    const int64_t id = order[static_cast<size_t>(r)];
    std::printf("logit %lld %.4f %s\n", static_cast<long long>(id), logits[static_cast<size_t>(id)],
                shown_ids(tok, {id}).c_str());
  }
  return order[0];
}

// Section 6: greedy generation with the KV cache, and the same without it.
void show_generation(GPT& model, const BpeTokenizer& tok, const std::vector<int64_t>& ids,
                     int64_t n, int64_t best_next) {
  Generator unused(0);  // temperature 0 draws nothing
  const std::vector<int64_t> cached = model.generate(ids, n, {.temperature = 0}, unused);
  const std::vector<int64_t> fresh =
      model.generate(ids, n, {.temperature = 0, .use_cache = false}, unused);
  const std::vector<int64_t> added(cached.begin() + static_cast<int64_t>(ids.size()), cached.end());
  std::cout << shown_ids(tok, ids) << " + " << shown_ids(tok, added) << "\n";
  lesson::expect(cached == fresh, "the KV cache gives the same tokens as recomputing every step");
  if (n > 0)
    lesson::expect(added[0] == best_next, "the first generated token is the top logit above");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  lesson::Flags flags = flags_for(o);
  return lesson::run(flags, argc, argv, [&] {
    try {
      nn::decode_utf8(o.prompt);
    } catch (const Error& e) {
      flags.fail("--prompt: " + std::string(e.what()));
    }
    if (!o.write_tiny.empty()) {
      // All four files or none: written into a staging folder beside the target (removed if
      // anything fails, a full disk say), then moved in, one rename each.
      namespace fs = std::filesystem;
      std::error_code ec;
      const fs::path target = o.write_tiny;
      if (fs::exists(target, ec) && !fs::is_directory(target, ec))
        throw Error("--write_tiny \"" + o.write_tiny +
                    "\": a folder for the four files, got a file");
      fs::path staging = target;
      staging += ".writing";
      for (int n = 1; fs::exists(staging, ec); ++n)
        (staging = target) += ".writing" + std::to_string(n);
      fs::create_directories(staging, ec);
      if (!fs::is_directory(staging, ec))
        throw Error("--write_tiny \"" + o.write_tiny +
                    "\": could not make a folder beside it: " + ec.message());
      lesson::remove_if_unfinished(staging.string());
      write_tiny_gpt2(staging.string());
      fs::create_directories(target, ec);
      for (const char* file : {"vocab.json", "merges.txt", "model.safetensors", "config.json"}) {
        fs::rename(staging / file, target / file, ec);
        if (ec)
          throw Error("--write_tiny \"" + o.write_tiny + "\": could not move " + file +
                      " into it: " + ec.message());
      }
      fs::remove_all(staging, ec);
      lesson::finished(staging.string());
      std::cout << "wrote the tiny GPT-2 to " << o.write_tiny << "\n";
      return 0;
    }
    if (!o.tokenizer.empty()) {  // the tokens alone: two small files, no weights
      if (!o.model.empty()) flags.fail("--tokenizer and --model exclude each other");
      lesson::banner("1. The tokenizer's files");
      const BpeTokenizer tok = BpeTokenizer::from_folder(o.tokenizer);
      std::printf("%s: %lld tokens, %zu merges\n", o.tokenizer.c_str(),
                  static_cast<long long>(tok.vocab_size()), tok.merges().size());
      lesson::banner("2. The prompt as GPT-2's tokens");
      show_tokens(tok, o.prompt, o.print_ids);
      std::cout << "(The tokenizer alone: with --model DIR, a folder that also holds config.json\n"
                   "and model.safetensors, the lesson goes on to the embeddings, attention and\n"
                   "next tokens.)\n";
      lesson::exercises({"25.1 bpe_merge: one merge applied to a sequence of token ids"});
      return lesson::finish();
    }
    const bool real = !o.model.empty();
    std::unique_ptr<ScratchFolder> scratch;

    lesson::banner("1. The model's files");
    std::string dir = o.model;
    if (!real) {
      std::cout
          << "No --model given. To run GPT-2 small itself, download config.json,\n"
             "model.safetensors, vocab.json and merges.txt from Hugging Face's gpt2\n"
             "repository (https://huggingface.co/openai-community/gpt2, Files) into one\n"
             "folder and pass it with --model. Now: a tiny GPT-2 with random weights, written\n"
             "in the same layout to a scratch folder and read back the same way.\n";
      scratch = std::make_unique<ScratchFolder>();
      dir = scratch->path();
      write_tiny_gpt2(dir);
    }
    // A bad input ends the lesson with one error line; the scratch folder goes first.
    auto fail = [&](const std::string& why) { throw Error(why); };
    std::unique_ptr<GPT> model;
    std::unique_ptr<BpeTokenizer> tok;
    try {
      model = load_gpt2(dir);
      tok = std::make_unique<BpeTokenizer>(BpeTokenizer::from_folder(dir));
    } catch (const Error& e) {
      fail(e.what());
    }
    const GPTConfig& c = model->config;
    if (tok->vocab_size() > c.vocab_size)
      fail("the tokenizer has " + std::to_string(tok->vocab_size()) +
           " tokens, more than config.json's vocab_size " + std::to_string(c.vocab_size));
    if (o.head >= c.n_head)
      fail("--head must be below n_head (" + std::to_string(c.n_head) + "), got " +
           std::to_string(o.head));
    std::printf(
        "%s: %lld layers, %lld heads of %lld, C = %lld, %lld positions, %lld tokens, "
        "%lld parameters\n",
        real ? dir.c_str() : "tiny GPT-2", static_cast<long long>(c.n_layer),
        static_cast<long long>(c.n_head), static_cast<long long>(c.n_embd / c.n_head),
        static_cast<long long>(c.n_embd), static_cast<long long>(c.block),
        static_cast<long long>(c.vocab_size), static_cast<long long>(model->num_parameters()));
    if (!real)
      std::printf(
          "its vocabulary: 256 bytes, %zu merges learned from lesson 16's corpus (300 asked for;\n"
          "learning stops once every piece of the text is one token) and <|endoftext|>\n",
          tok->merges().size());
    NoGradGuard no_grad;

    lesson::banner("2. The prompt as GPT-2's tokens");
    const std::vector<int64_t> ids = show_tokens(*tok, o.prompt, o.print_ids);
    const int64_t T = static_cast<int64_t>(ids.size());
    if (T > c.block)
      fail("the prompt is " + std::to_string(T) + " tokens, more than the model's " +
           std::to_string(c.block) + " positions");
    if (o.generate > c.block - T)  // (T + generate could overflow)
      fail("the prompt's " + std::to_string(T) + " tokens + --generate " +
           std::to_string(o.generate) + " pass the model's " + std::to_string(c.block) +
           " positions");

    lesson::banner(real ? "3. Token rows plus position rows, then LayerNorm (the article's table)"
                        : "3. Token rows plus position rows, then LayerNorm");
    show_embeddings(*model, *tok, ids);
    if (real && o.prompt == Options().prompt)
      std::cout << "The article's table, for comparison (its first two rows, as it prints them):\n"
                   "  It    wte [0.039, -0.0869, 0.0662]  wpe [-0.0188, -0.1974, 0.004]\n"
                   "        sum [0.0202, -0.2844, 0.0702]  X [0.0129, -0.1104, -0.0317]\n"
                   "  âĢ    wte [-0.075, 0.0948, -0.0034]  wpe [0.024, -0.0538, -0.0949]\n"
                   "        sum [-0.051, 0.041, -0.0982]  X [-0.0530, 0.0588, -0.1290]\n";

    // One forward over the prompt: block 0 keeps its attention weights (section 4), and the last
    // position's logits rank the next token (section 5).
    const Tensor logits = model->forward(from_vector(ids, {1, T}));

    lesson::banner("4. Layer 0's attention");
    show_attention(*model, *tok, ids, o.head, real);

    lesson::banner("5. The most likely next tokens");
    const int64_t best = show_top_logits(logits, *tok, o.top_logits);

    lesson::banner("6. Greedy generation");
    show_generation(*model, *tok, ids, o.generate, best);
    lesson::exercises({"25.1 bpe_merge: one merge applied to a sequence of token ids"});
    return lesson::finish();
  });
}

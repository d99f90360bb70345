// Lesson 17: attention maps as pictures: what the heads of a trained tiny GPT look at.
//
// What you will learn:
//   - every head of every layer of lesson 16's tiny GPT drawn as a heatmap over one validation
//     sequence (SVG), before and after training;
//   - how to read a head from numbers: over many sequences, how much of each query's weight
//     goes to itself, to the previous character, to the first letter of its word (for a query
//     inside a word), and how far back it looks on average;
//   - what training does to the maps: untrained rows spread their weight thin over the past;
//     trained ones put more of it on fewer characters, and a head may specialise, as the
//     table below shows (with the default run, one head on the previous character).
// What comes before: lesson 16 (training the tiny GPT).
// Run it: ./build/release/tutorials/17_attention_maps [--steps 800] [--svg_dir DIR]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "attention/all.h"
#include "tutorials/common/corpus.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/plot.h"

using namespace qkv;
using namespace qkv::attention;

namespace {

struct HeadStats {
  double self = 0, previous = 0, word_start = 0, distance = 0, peak = 0;
  int64_t inside_word = 0;  // the queries word_start averages over
};

// Averages over every query position t >= 1 of `batch` validation sequences.
std::vector<HeadStats> head_stats(GPT& m, const Tensor& val, const CharTokenizer& tok) {
  NoGradGuard no_grad;
  Generator gv(0);
  const int64_t batch = 32, T = m.config.block, H = m.config.n_head;
  const Batch b = get_batch(val, T, batch, gv);
  m(b.x);
  const std::vector<int64_t> ids = b.x.to_vector<int64_t>();
  int64_t space = -1;
  for (int64_t i = 0; i < tok.vocab_size(); ++i)
    if (tok.chars()[static_cast<size_t>(i)] == U' ') space = i;
  std::vector<HeadStats> out;
  for (int64_t layer = 0; layer < m.config.n_layer; ++layer) {
    const Tensor w = m.block(layer).attention_weights;  // (batch, H, T, T)
    for (int64_t h = 0; h < H; ++h) {
      HeadStats s;
      int64_t n = 0;
      for (int64_t s_i = 0; s_i < batch; ++s_i)
        for (int64_t t = 1; t < T; ++t, ++n) {
          const float* row = w.data_ptr() + ((s_i * H + h) * T + t) * T;
          s.self += row[t];
          s.previous += row[t - 1];
          int64_t last_space = -1;
          for (int64_t j = 0; j < t; ++j)
            if (ids[static_cast<size_t>(s_i * T + j)] == space) last_space = j;
          // The first letter of the query's word, when the word began before the query (a query
          // that is itself the first letter would count as "self").
          if (last_space >= 0 && last_space + 1 < t) {
            s.word_start += row[last_space + 1];
            ++s.inside_word;
          }
          float top = 0;
          for (int64_t j = 0; j <= t; ++j) {
            s.distance += row[j] * static_cast<double>(t - j);
            top = std::max(top, row[j]);
          }
          s.peak += top;
        }
      s.self /= n, s.previous /= n, s.distance /= n, s.peak /= n;
      s.word_start /= static_cast<double>(std::max<int64_t>(1, s.inside_word));
      out.push_back(s);
    }
  }
  return out;
}

std::string describe(const HeadStats& s) {
  if (s.previous > 0.5) return "the previous character";
  if (s.self > 0.5) return "itself";
  if (s.word_start > 0.4) return "the first letter of the current word";
  if (s.distance > 6) return "far back, spread out";
  return "a mix of recent characters";
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int64_t kFullRun = 800;
  int64_t steps = kFullRun;
  std::string svg_dir = ".";
  lesson::Flags flags("17_attention_maps",
                      "Every head of a trained tiny GPT as a heatmap, and what each one looks at.");
  flags.number("--steps", &steps, "training steps (the lesson's checks need 800)", 1, 10'000'000);
  flags.output_folder("--svg_dir", &svg_dir, "folder for attention_maps_untrained.svg and _trained.svg");
  return lesson::run(flags, argc, argv, [&] {
    const std::string text = lesson::builtin_corpus();
    const CharTokenizer tok(text);
    const TextSplit split = split_90_10(tok.encode(text));
    GPTConfig config{.vocab_size = tok.vocab_size()};
    manual_seed(1337);
    GPT m(config);

    // One validation sequence to draw, and its characters as labels.
    const std::vector<int64_t> val = split.val.to_vector<int64_t>();
    const std::vector<int64_t> seq(val.begin(), val.begin() + config.block);
    std::vector<std::string> labels, terminal_labels;  // spaces and newlines made visible
    for (int64_t id : seq) {
      const std::string c =
          encode_utf8(std::vector<char32_t>{tok.chars()[static_cast<size_t>(id)]});
      labels.push_back(lesson::char_label(c, false));
      terminal_labels.push_back(lesson::char_label(c, true));
    }
    // Every head of every layer on the sequence above, one grid of layers x heads in one file.
    auto draw = [&](const std::string& file, const std::string& when) {
      NoGradGuard no_grad;
      m(from_vector(seq, {1, config.block}));
      lesson::HeatmapGrid grid{
          .title = "tiny GPT (causal mask), " + when +
                   ": the attention weights of every head on one validation sequence",
          .row_labels = labels,
          .column_labels = labels,
          .caption = {"Row t: how query position t spreads its attention over key positions "
                      "0..t (each row sums to 1; above the diagonal the mask leaves 0).",
                      lesson::kCharLabelKey},
          .scale_max = 1};
      std::vector<Tensor> maps;
      for (int64_t layer = 0; layer < config.n_layer; ++layer) {
        grid.maps.emplace_back();
        grid.row_titles.push_back("layer " + std::to_string(layer));
        for (int64_t h = 0; h < config.n_head; ++h) {
          maps.push_back(select(select(m.block(layer).attention_weights, 0, 0), 0, h));
          grid.maps.back().push_back(maps.back());
        }
      }
      for (int64_t h = 0; h < config.n_head; ++h)
        grid.column_titles.push_back("head " + std::to_string(h));
      nn::write_file_atomic(svg_dir + "/" + file, lesson::svg_heatmap_grid(grid));
      std::cout << "wrote " << svg_dir << "/" << file << "\n";
      return maps;
    };

    lesson::banner("1. Before training");
    draw("attention_maps_untrained.svg", "untrained (step 0)");
    const std::vector<HeadStats> before = head_stats(m, split.val, tok);

    lesson::banner("2. Training (lesson 16's loop, " + std::to_string(steps) + " steps)");
    nn::AdamW opt(m.parameters(), 1e-3);
    Generator g(1337);
    for (int64_t step = 0; step < steps; ++step) {
      const Batch b = get_batch(split.train, config.block, 16, g);
      const Tensor loss = cross_entropy(view(m(b.x), {16 * config.block, config.vocab_size}),
                                        view(b.y, {16 * config.block}));
      opt.zero_grad();
      backward(loss);
      opt.step();
      if (step % 200 == 0 || step == steps - 1)
        std::printf("  step %4lld  loss %.4f\n", static_cast<long long>(step), loss.item<float>());
    }

    lesson::banner("3. After training: every head");
    const std::vector<Tensor> maps =
        draw("attention_maps_trained.svg", "after " + std::to_string(steps) + " training steps");
    std::cout << "layer 0 head 0 on \"" << tok.decode(seq) << "\":\n"
              << lesson::terminal_heatmap(maps[0], terminal_labels);
    const std::vector<HeadStats> after = head_stats(m, split.val, tok);
    std::printf("\n  head   self   prev   word start  distance  peak   looks at\n");
    double peak_before = 0, peak_after = 0;
    for (size_t i = 0; i < after.size(); ++i) {
      const HeadStats& s = after[i];
      std::printf("  L%zu H%zu  %.2f   %.2f   %.2f        %5.1f     %.2f   %s\n",
                  i / static_cast<size_t>(config.n_head), i % static_cast<size_t>(config.n_head),
                  s.self, s.previous, s.word_start, s.distance, s.peak, describe(s).c_str());
      peak_before += before[i].peak / static_cast<double>(after.size());
      peak_after += after[i].peak / static_cast<double>(after.size());
    }
    std::printf("mean largest weight of a row: %.2f untrained, %.2f trained\n", peak_before,
                peak_after);
    const bool full = steps >= kFullRun;
    lesson::expect_learned(full, peak_after > peak_before + 0.1,
                           "training sharpens the maps: rows put more weight on fewer characters");
    bool previous_head = false;
    for (const HeadStats& s : after) previous_head = previous_head || s.previous > 0.5;
    lesson::expect_learned(
        full, previous_head,
        "a head has learned to look at the previous character (most of its weight)");
    std::cout << "(self, prev: the mean weight a query gives itself and the character before it;\n"
                 "word start: the mean weight a query inside a word gives the word's first\n"
                 "letter; distance: how many characters back its weight sits on average; peak:\n"
                 "its largest weight. A head is named by the first of: prev > 0.5, self > 0.5,\n"
                 "word start > 0.4, distance > 6; else a mix.)\n";
    return lesson::finish();
  });
}

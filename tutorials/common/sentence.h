// sentence.h: the running example of lessons 04, 06, 07 and 09-12, "Life is short, eat dessert first",
// tokenised and embedded as Sebastian Raschka's article does (lesson 04 builds it step by step).
#pragma once

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "nn/all.h"

namespace lesson {

inline const std::string kSentence = "Life is short, eat dessert first";

// The words, commas removed, split on spaces: sentence.replace(',', '').split()
inline std::vector<std::string> words(const std::string& sentence) {
  std::string clean;
  for (char c : sentence)
    if (c != ',') clean.push_back(c);
  std::istringstream is(clean);
  std::vector<std::string> out;
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

// {word: index} over the sorted words: {s: i for i, s in enumerate(sorted(words))}
inline std::map<std::string, int64_t> vocabulary(const std::vector<std::string>& ws) {
  std::vector<std::string> sorted = ws;
  std::sort(sorted.begin(), sorted.end());  // by byte: capitals first, as Python sorts
  std::map<std::string, int64_t> dc;
  for (size_t i = 0; i < sorted.size(); ++i) dc[sorted[i]] = static_cast<int64_t>(i);
  return dc;
}

// torch.tensor([dc[s] for s in words])
inline qkv::Tensor token_ids(const std::vector<std::string>& ws,
                             const std::map<std::string, int64_t>& dc) {
  std::vector<int64_t> ids;
  for (const std::string& w : ws) ids.push_back(dc.at(w));
  return qkv::from_vector(ids, {static_cast<int64_t>(ids.size())});
}

// torch.manual_seed(123); embed = torch.nn.Embedding(50_000, 3)
// embedded_sentence = embed(sentence_int).detach()                   (6, 3)
inline qkv::Tensor embedded_sentence() {
  const auto ws = words(kSentence);
  qkv::manual_seed(123);
  qkv::nn::Embedding embed(50'000, 3);
  return qkv::detach(embed(token_ids(ws, vocabulary(ws))));
}

}  // namespace lesson

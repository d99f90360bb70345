// corpus.h: the built-in training text of the tiny GPT (lesson 16), generated, not downloaded.
//
// Short sentences from a small grammar: a subject, a verb that agrees with it, an object, a
// place, sometimes a reason. Words repeat with fixed spellings, sentences have a shape, and
// some pairs always go together ("the bakers bake bread", "the owls hunt mice"), so a model that
// learns shows it plainly: first spaces and common letters, then real words, then phrases.
// The same seed always gives the same text, on every platform (it draws from qkv::Generator).
#pragma once

#include <string>
#include <vector>

#include "tensor/random.h"

namespace lesson {

inline std::string builtin_corpus(size_t approx_chars = 200'000, uint64_t seed = 2024) {
  struct Subject {
    const char* who;
    const char* verb;  // plural agreement is in the data: "the owls hunt", "an owl hunts"
    std::vector<const char*> objects;
  };
  const std::vector<Subject> subjects = {
      {"the baker", "bakes", {"bread", "small cakes", "a pie"}},
      {"the bakers", "bake", {"bread", "small cakes", "a pie"}},
      {"an old owl", "hunts", {"mice", "a frog", "small birds"}},
      {"the owls", "hunt", {"mice", "a frog", "small birds"}},
      {"the farmer", "grows", {"wheat", "apples", "green beans"}},
      {"the farmers", "grow", {"wheat", "apples", "green beans"}},
      {"a young cat", "chases", {"a mouse", "the red ball", "its tail"}},
      {"the cats", "chase", {"a mouse", "the red ball", "their tails"}},
      {"the sailor", "mends", {"the net", "an old sail", "a rope"}},
      {"the children", "read", {"a book", "the old map", "short poems"}},
  };
  const std::vector<const char*> places = {"in the kitchen", "by the river",   "in the field",
                                           "at the harbor",  "under the tree", "near the mill"};
  const std::vector<const char*> times = {"every morning", "at night", "in the spring",
                                          "after the rain", "on sundays"};
  const std::vector<const char*> reasons = {"before the sun goes down", "while the bells ring",
                                            "because the market opens soon"};
  qkv::Generator gen(seed);
  auto pick = [&gen](size_t n) { return static_cast<size_t>(gen.random() % n); };
  std::string text;
  while (text.size() < approx_chars) {
    const Subject& s = subjects[pick(subjects.size())];
    std::string sentence =
        std::string(s.who) + " " + s.verb + " " + s.objects[pick(s.objects.size())];
    if (pick(2) == 0) sentence += std::string(" ") + places[pick(places.size())];
    if (pick(3) == 0) sentence += std::string(" ") + times[pick(times.size())];
    if (pick(5) == 0) sentence += std::string(" ") + reasons[pick(reasons.size())];
    sentence[0] = static_cast<char>(sentence[0] - 'a' + 'A');  // a capital to start
    text += sentence + (pick(4) == 0 ? ".\n" : ". ");
  }
  return text;
}

}  // namespace lesson

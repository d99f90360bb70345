// Exercise 25.1 (bpe_merge), a reference solution. Try the exercise first:
// tutorials/exercises/learner/25_1_bpe_merge.cpp states the task.
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor bpe_merge(const Tensor& ids, int64_t a, int64_t b, int64_t new_id) {
  const std::vector<int64_t> in = ids.to_vector<int64_t>();
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i + 1 < in.size() && in[i] == a && in[i + 1] == b) {
      out.push_back(new_id);
      ++i;  // the pair is consumed
    } else {
      out.push_back(in[i]);
    }
  }
  return from_vector(out, {static_cast<int64_t>(out.size())});
}

}  // namespace qkv::exercises::solution

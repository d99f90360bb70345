// Exercise 25.1 (bpe_merge): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <algorithm>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

Tensor ids_tensor(const std::vector<int64_t>& ids) {
  return from_vector(ids, {static_cast<int64_t>(ids.size())});
}

// Wrong: replaces the first occurrence only.
Tensor bpe_merge_first_only(const Tensor& ids, int64_t a, int64_t b, int64_t new_id) {
  std::vector<int64_t> v = ids.to_vector<int64_t>();
  for (size_t i = 0; i + 1 < v.size(); ++i)
    if (v[i] == a && v[i + 1] == b) {
      v[i] = new_id;
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      break;
    }
  return ids_tensor(v);
}

// Wrong: does not skip the pair's second token: in 5 5 5 7 every (5, 5) becomes new and the
// second 5 is kept as well.
Tensor bpe_merge_overlapping(const Tensor& ids, int64_t a, int64_t b, int64_t new_id) {
  const std::vector<int64_t> in = ids.to_vector<int64_t>();
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i)
    out.push_back(i + 1 < in.size() && in[i] == a && in[i + 1] == b ? new_id : in[i]);
  return ids_tensor(out);
}

// Wrong: scans from the right: in (5, 5, 5) the last two merge.
Tensor bpe_merge_right_to_left(const Tensor& ids, int64_t a, int64_t b, int64_t new_id) {
  std::vector<int64_t> in = ids.to_vector<int64_t>();
  std::vector<int64_t> out;
  for (size_t i = in.size(); i > 0; --i) {
    if (i >= 2 && in[i - 2] == a && in[i - 1] == b) {
      out.push_back(new_id);
      --i;
    } else {
      out.push_back(in[i - 1]);
    }
  }
  std::reverse(out.begin(), out.end());
  return ids_tensor(out);
}

// Wrong: loops while i + 1 < size, so a last token that is not merged is dropped.
Tensor bpe_merge_drops_last(const Tensor& ids, int64_t a, int64_t b, int64_t new_id) {
  const std::vector<int64_t> in = ids.to_vector<int64_t>();
  std::vector<int64_t> out;
  for (size_t i = 0; i + 1 < in.size(); ++i) {
    if (in[i] == a && in[i + 1] == b) {
      out.push_back(new_id);
      ++i;
    } else {
      out.push_back(in[i]);
    }
  }
  return ids_tensor(out);
}

// Wrong: looks for (b, a) instead of (a, b).
Tensor bpe_merge_reversed_pair(const Tensor& ids, int64_t a, int64_t b, int64_t new_id) {
  return solution::bpe_merge(ids, b, a, new_id);
}

// Wrong: writes the merged ids into ids' own memory (right numbers, the caller's ids changed).
Tensor bpe_merge_writes_in_place(const Tensor& ids, int64_t a, int64_t b, int64_t new_id) {
  const Tensor merged = solution::bpe_merge(ids, a, b, new_id);
  if (merged.numel() > 0) copy_(narrow(ids, 0, 0, merged.numel()), merged);
  return clone(narrow(ids, 0, 0, merged.numel()));
}

// Wrong: reads ids' memory in order, as if it were contiguous (a sliced view is not).
Tensor bpe_merge_reads_memory(const Tensor& ids, int64_t a, int64_t b, int64_t new_id) {
  return solution::bpe_merge(memory_order(ids), a, b, new_id);
}

const Catalogue<signature::bpe_merge>& bpe_merge_mistakes() {
  static const Catalogue<signature::bpe_merge> c = {
      {"bpe_merge_first_only", bpe_merge_first_only,
       "replace every occurrence of the pair, not only the first",
       "every adjacent (a, b), left to right, becomes new_id"},
      {"bpe_merge_overlapping", bpe_merge_overlapping,
       "a merged pair is consumed: after merging at i, go on at i + 2, so both tokens go (in "
       "5 5 5, (5, 5) merges once, leaving new 5)",
       "left to right, the pair's two tokens consumed"},
      {"bpe_merge_right_to_left", bpe_merge_right_to_left,
       "scan left to right: in 5 5 5 the first two merge, giving new 5",
       "left to right, the pair's two tokens consumed"},
      {"bpe_merge_drops_last", bpe_merge_drops_last,
       "keep the last token when it does not start a pair: loop over every index, and test "
       "i + 1 < size for the pair alone",
       "tokens not in a merged pair are kept, the last one too"},
      {"bpe_merge_reversed_pair", bpe_merge_reversed_pair,
       "match a then b, in that order: (a, b) is an ordered pair", "ids[i] == a && ids[i+1] == b"},
      {"bpe_merge_writes_in_place", bpe_merge_writes_in_place,
       "build the result in a new vector: ids must stay as it was",
       "a new tensor of N - merges ids", "modified its input 'ids'"},
      {"bpe_merge_reads_memory", bpe_merge_reads_memory,
       "read the ids with to_vector<int64_t>() (in order whatever the layout), not data_ptr(): "
       "a sliced view's memory holds other numbers between",
       "ids[i] is element i of ids as a tensor"}};
  return c;
}

}  // namespace qkv::exercises::wrong

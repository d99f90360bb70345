// Exercise 07.1 (softmax_rows): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: does not subtract the max: e^x overflows.
Tensor softmax_rows_no_max(const Tensor& x) {
  const Tensor e = exp(x);
  return e / sum(e, -1, /*keepdim=*/true);
}

// Wrong: normalises over the first dim instead of the last.
Tensor softmax_rows_wrong_axis(const Tensor& x) {
  const Tensor m = max(x, 0, /*keepdim=*/true).values;
  const Tensor e = exp(x - m);
  return e / sum(e, 0, /*keepdim=*/true);
}

// Wrong: divides by the sum over the whole tensor.
Tensor softmax_rows_global_sum(const Tensor& x) {
  const Tensor m = max(x, -1, /*keepdim=*/true).values;
  const Tensor e = exp(x - m);
  return e / sum(e);
}

// Wrong: subtracts the max of the whole tensor, not of each row: a row far below the
// tensor's max underflows to all zeros, and 0 / 0 is NaN (and an empty batch has no max).
Tensor softmax_rows_global_max(const Tensor& x) {
  const Tensor e = exp(x - max(x));
  return e / sum(e, -1, /*keepdim=*/true);
}

// Wrong: reads x's memory in order, as if it were contiguous (a transposed view is not).
Tensor softmax_rows_reads_memory(const Tensor& x) {
  return solution::softmax_rows(memory_order(x));
}

// Wrong: works row by row and stacks the rows: stack() of no rows (an empty batch) is an
// error.
Tensor softmax_rows_per_row(const Tensor& x) {
  const Tensor rows = reshape(x, {-1, x.size(-1)});
  std::vector<Tensor> each;
  for (int64_t r = 0; r < rows.size(0); ++r) {
    const Tensor row = select(rows, 0, r);
    const Tensor e = exp(row - max(row));
    each.push_back(e / sum(e));
  }
  return reshape(stack(each, 0), x.shape());
}

const Catalogue<signature::softmax_rows>& softmax_rows_mistakes() {
  static const Catalogue<signature::softmax_rows> c = {
      {"softmax_rows_no_max", softmax_rows_no_max,
       "subtract each row's max before exp: e^x overflows float32 for x > 88",
       "y_i = e^(x_i - m) / sum_j e^(x_j - m), m = max_j x_j"},
      {"softmax_rows_wrong_axis", softmax_rows_wrong_axis,
       "normalise over the last dim (dim -1), not the first", "softmax over dim -1 (per row)"},
      {"softmax_rows_global_sum", softmax_rows_global_sum,
       "divide each row by its own sum (sum over dim -1, keepdim), not the whole tensor's",
       "y_i = e^(x_i - m) / sum_j e^(x_j - m), j over the row"},
      {"softmax_rows_global_max", softmax_rows_global_max,
       "subtract each row's own max (max over dim -1, keepdim), not the whole tensor's",
       "m = max_j x_j over the row"},
      {"softmax_rows_reads_memory", softmax_rows_reads_memory,
       "read x with qkv's ops or to_vector() (row-major whatever the layout), not data_ptr(): "
       "a transposed view's memory is in another order",
       "x[i, j] is the element at row i, column j of x as a tensor"},
      {"softmax_rows_per_row", softmax_rows_per_row,
       "work on every row at once (max and sum over dim -1, keepdim): a loop over the rows has "
       "nothing to stack when there are none",
       "y = softmax over dim -1, for any number of rows, 0 included"}};
  return c;
}

}  // namespace qkv::exercises::wrong

// Exercise 13.1 (softmax_backward): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: drops the sum term: dx = y * dy.
Tensor softmax_backward_no_sum(const Tensor& y, const Tensor& dy) {
  return y * dy;
}

// Wrong: sums over the first dim instead of the row.
Tensor softmax_backward_wrong_axis(const Tensor& y, const Tensor& dy) {
  return y * (dy - sum(dy * y, 0, /*keepdim=*/true));
}

// Wrong: forgets the leading y: dx = dy - sum(dy * y).
Tensor softmax_backward_missing_y(const Tensor& y, const Tensor& dy) {
  return dy - sum(dy * y, -1, /*keepdim=*/true);
}

// Wrong: sums dy * y over the whole tensor, not over each row.
Tensor softmax_backward_global_sum(const Tensor& y, const Tensor& dy) {
  return y * (dy - sum(dy * y));
}

// Wrong: subtracts the row's sum of dy, without weighting it by y.
Tensor softmax_backward_minus_sum_dy(const Tensor& y, const Tensor& dy) {
  return y * (dy - sum(dy, -1, /*keepdim=*/true));
}

// Wrong: reads dy's memory in order, as if it were contiguous (a transposed view is not).
Tensor softmax_backward_reads_memory(const Tensor& y, const Tensor& dy) {
  return solution::softmax_backward(y, memory_order(dy));
}

// Wrong: works row by row and stacks the rows: stack() of no rows (an empty batch) is an
// error.
Tensor softmax_backward_per_row(const Tensor& y, const Tensor& dy) {
  const int64_t N = y.size(-1);
  const Tensor y2 = reshape(y, {-1, N}), dy2 = reshape(dy, {-1, N});
  std::vector<Tensor> rows;
  for (int64_t r = 0; r < y2.size(0); ++r) {
    const Tensor yr = select(y2, 0, r), dyr = select(dy2, 0, r);
    rows.push_back(yr * (dyr - sum(dyr * yr)));
  }
  return reshape(stack(rows, 0), y.shape());
}

const Catalogue<signature::softmax_backward>& softmax_backward_mistakes() {
  static const Catalogue<signature::softmax_backward> c = {
      {"softmax_backward_no_sum", softmax_backward_no_sum,
       "every y_j depends on every x_i: subtract the row's sum(dy * y)",
       "dx_i = y_i (dy_i - sum_j dy_j y_j)"},
      {"softmax_backward_wrong_axis", softmax_backward_wrong_axis,
       "sum over the last dim (the row the softmax normalised), not the first",
       "sum_j over the row"},
      {"softmax_backward_missing_y", softmax_backward_missing_y,
       "multiply by y: dx = y * (dy - sum(dy * y))", "dx_i = y_i (dy_i - sum_j dy_j y_j)"},
      {"softmax_backward_global_sum", softmax_backward_global_sum,
       "sum dy * y per row (dim -1, keepdim), not over the whole tensor",
       "sum_j dy_j y_j, j over the row"},
      {"softmax_backward_minus_sum_dy", softmax_backward_minus_sum_dy,
       "weight the sum by y: subtract sum_j dy_j y_j, not sum_j dy_j",
       "dx_i = y_i (dy_i - sum_j dy_j y_j)"},
      {"softmax_backward_reads_memory", softmax_backward_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "dy[i, j] is the element at row i, column j of dy as a tensor"},
      {"softmax_backward_per_row", softmax_backward_per_row,
       "work on every row at once (sum over dim -1, keepdim): a loop over the rows has nothing "
       "to stack when there are none",
       "dx = y * (dy - sum(dy * y, -1, keepdim)), for any number of rows, 0 included"}};
  return c;
}

}  // namespace qkv::exercises::wrong

// fuzz_tensor_ops.cpp: shape, broadcast and view ops driven by arbitrary bytes.
//
// The bytes pick a starting tensor (rank 0-4, sizes 0-5, values 0, 1, 2, ... so every element
// is its own flat index), then up to 12 operations with their arguments: view and reshape
// (-1 included), flatten, transpose, permute, unsqueeze, squeeze, expand, narrow, slice,
// select, cat, broadcasting add, sum over a dim, matmul. Arguments are small signed numbers,
// so out-of-range dims, negative sizes and impossible shapes come up all the time; they must
// end in a qkv::Error. When an op succeeds, its result is checked against another route to
// the same answer (an invariant), and the op is run again through autograd to check that the
// gradient of sum(result) has the input's shape and the right total.
#include <cmath>
#include <vector>

#include "tests/fuzz/fuzz_input.h"

namespace qkv::fuzz {
namespace {

constexpr int64_t kMaxElements = 1 << 14;  // keeps each input fast; shapes stay interesting

struct Op {
  int kind = 0;
  std::vector<int64_t> ints;  // the op's arguments, read once from the bytes
  Shape other;                // a second operand's shape (add, cat, matmul)
};

Op read_op(Input& in) {
  Op op;
  op.kind = static_cast<int>(in.in(0, 15));
  const int64_t n = in.in(0, 5);
  for (int64_t i = 0; i < n; ++i) op.ints.push_back(in.in(-3, 6));
  const int64_t rank = in.in(0, 4);
  for (int64_t i = 0; i < rank; ++i) op.other.push_back(in.in(0, 5));
  return op;
}

int64_t arg(const Op& op, size_t i) {
  return i < op.ints.size() ? op.ints[i] : 0;
}

Tensor counting(const Shape& shape) {  // 0, 1, 2, ... laid out as `shape`
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return reshape(arange_float(0.0, static_cast<double>(n), 1.0), shape);
}

// The op, through the autograd-recording functions: on a tensor that does not require grad
// they are exactly the raw tensor ops; on one that does, they also record the backward.
Tensor apply(const Op& op, const Tensor& x) {
  const Shape ints(op.ints.begin(), op.ints.end());
  switch (op.kind) {
    case 0:
      return view(x, ints);
    case 1:
      return reshape(x, ints);
    case 2:
      return flatten(x, arg(op, 0), arg(op, 1));
    case 3:
      return transpose(x, arg(op, 0), arg(op, 1));
    case 4:
      return permute(x, op.ints);
    case 5:
      return unsqueeze(x, arg(op, 0));
    case 6:
      return op.ints.empty() ? squeeze(x) : squeeze(x, arg(op, 0));
    case 7:
      return expand(x, ints);
    case 8:
      return narrow(x, arg(op, 0), arg(op, 1), arg(op, 2));
    case 9:
      return slice(x, arg(op, 0), arg(op, 1), arg(op, 2), std::max<int64_t>(1, arg(op, 3)));
    case 10:
      return select(x, arg(op, 0), arg(op, 1));
    case 11:
      return cat({x, x}, arg(op, 0));
    case 12:
      return cat({x, zeros(op.other)}, arg(op, 0));
    case 13:
      return add(x, zeros(op.other));  // broadcasting
    case 14:
      return sum(x, arg(op, 0), arg(op, 1) > 0);
    default:
      return matmul(x, counting(op.other));
  }
}

double total(const Tensor& t) {
  double s = 0;
  for (float v : t.to_vector<float>()) s += v;
  return s;
}

bool same_values(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.to_vector<float>() == b.to_vector<float>();
}

// Another route to the same answer, for the ops that have one.
void check_result(const Op& op, const Tensor& x, const Tensor& y) {
  int64_t n = 1;
  for (int64_t s : y.shape()) {
    QKV_FUZZ_CHECK(s >= 0);
    n *= s;
  }
  QKV_FUZZ_CHECK(n == y.numel());
  QKV_FUZZ_CHECK(static_cast<int64_t>(y.to_vector<float>().size()) == n);  // reads every element
  switch (op.kind) {
    case 0:
    case 1:
    case 2:  // same elements in the same (row-major) order
      QKV_FUZZ_CHECK(x.to_vector<float>() == y.to_vector<float>());
      break;
    case 3:  // transposing back gives x
      QKV_FUZZ_CHECK(same_values(transpose(y, arg(op, 0), arg(op, 1)), x));
      break;
    case 5:  // squeezing the new dim gives x
      QKV_FUZZ_CHECK(same_values(squeeze(y, arg(op, 0)), x));
      break;
    case 7:  // the view that repeats equals the broadcasting add that copies
      QKV_FUZZ_CHECK(same_values(y, add(zeros(y.shape()), x)));
      break;
    case 8: {  // narrow is slice with step 1 (narrow counts a negative start from the end)
      const int64_t start = arg(op, 1) < 0 ? arg(op, 1) + x.size(arg(op, 0)) : arg(op, 1);
      QKV_FUZZ_CHECK(same_values(y, slice(x, arg(op, 0), start, start + arg(op, 2))));
      break;
    }
    case 10: {  // select is a narrow of length 1 without the dim
      const int64_t index = arg(op, 1) < 0 ? arg(op, 1) + x.size(arg(op, 0)) : arg(op, 1);
      QKV_FUZZ_CHECK(same_values(y, squeeze(narrow(x, arg(op, 0), index, 1), arg(op, 0))));
      break;
    }
    case 11:
    case 14: {  // totals: cat doubles it, sum keeps it (up to rounding: the values may be large
                // after a few matmuls, and each total adds them up in a different order)
      const double want = op.kind == 11 ? 2 * total(x) : total(x), got = total(y);
      if (std::isfinite(want))
        QKV_FUZZ_CHECK(std::fabs(got - want) <= 1e-4 * (1 + std::fabs(want)));
      break;
    }
    case 15:
      if (x.dim() == 2 && y.dim() == 2) {  // against the textbook triple loop
        const Tensor b = counting(op.other);
        const auto av = x.to_vector<float>(), bv = b.to_vector<float>(), yv = y.to_vector<float>();
        const int64_t M = x.size(0), K = x.size(1), N = b.size(1);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k) s += double(av[i * K + k]) * bv[k * N + j];
            QKV_FUZZ_CHECK(std::fabs(yv[i * N + j] - s) <= 1e-5 * (1 + std::fabs(s)));
          }
      }
      break;
    default:
      break;
  }
}

// The same op with history: the gradient of sum(y) lands on x with x's shape, and (for ops that
// pick or repeat elements) its entries add up to y's element count (x's, where y is x padded
// with zeros or summed).
void check_gradient(const Op& op, const Tensor& x, const Tensor& y) {
  const Tensor xg = requires_grad_(raw::clone(x));
  const Tensor yg = apply(op, xg);
  backward(sum(yg));
  const Tensor g = grad(xg);
  QKV_FUZZ_CHECK(g.defined() && g.shape() == x.shape());
  if (op.kind <= 13 && op.kind != 12) QKV_FUZZ_CHECK(total(g) == static_cast<double>(y.numel()));
  if (op.kind == 12 || op.kind == 14) QKV_FUZZ_CHECK(total(g) == static_cast<double>(x.numel()));
}

}  // namespace
}  // namespace qkv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qkv;
  using namespace qkv::fuzz;
  Input in(data, size);
  Shape shape;
  const int64_t rank = in.in(0, 4);
  for (int64_t i = 0; i < rank; ++i) shape.push_back(in.in(0, 5));
  Tensor x = counting(shape);
  for (int step = 0; step < 12 && !in.empty(); ++step) {
    const Op op = read_op(in);
    Tensor y;
    try {
      y = apply(op, x);
    } catch (const Error&) {
      continue;  // refused with a named error: the one allowed way out
    }
    if (y.numel() > kMaxElements) break;
    check_result(op, x, y);
    check_gradient(op, x, y);
    x = y;
  }
  return 0;
}

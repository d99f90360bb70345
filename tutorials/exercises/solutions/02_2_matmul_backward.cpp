// Exercise 02.2 (matmul_backward), a reference solution. Try the exercise first:
// tutorials/exercises/learner/02_2_matmul_backward.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc) {
  return {matmul(dc, transpose(b, 0, 1)), matmul(transpose(a, 0, 1), dc)};
}

}  // namespace qkv::exercises::solution

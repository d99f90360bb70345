// lane_sum_forms.h: detail::lane_sum compiled twice, in its vector form (lane_sum_vector.cpp)
// and its portable scalar form (lane_sum_portable.cpp, built with QKV_LANE_VECTORS=0, what
// compilers without GCC's vector types get), so test_reduce.cpp can hold the two to the same
// bits. Both files are built without FMA contraction: the claim under test is the order of
// the additions, which must not depend on the form.
#pragma once

#include <cstdint>

namespace qkv::lane_sum_forms {

// sum of a[j] * b[j] * (a[j] - m) in float lanes, and of (a[j] - m)^2 widened to double lanes:
// the shapes of LayerNorm's backward and forward sums. One body (lane_sum_forms.inc), compiled
// in each form.
namespace vector {
float products(int64_t n, const float* a, const float* b, float m);
double squares(int64_t n, const float* a, float m);
}  // namespace vector
namespace portable {
float products(int64_t n, const float* a, const float* b, float m);
double squares(int64_t n, const float* a, float m);
}  // namespace portable

}  // namespace qkv::lane_sum_forms

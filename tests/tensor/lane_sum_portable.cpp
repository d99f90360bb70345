// lane_sum_portable.cpp: lane_sum's portable form for lane_sum_forms.h (see there).
#include "tensor/vector_math.h"
#include "tests/tensor/lane_sum_forms.h"

namespace qkv::lane_sum_forms {

float products_portable(int64_t n, const float* a, const float* b, float m) {
  return detail::lane_sum<float>(n, [&](auto at) { return at(a) * at(b) * (at(a) - m); });
}
double squares_portable(int64_t n, const float* a, float m) {
  return detail::lane_sum<double>(n, [&](auto at) {
    const auto d = detail::widen(at(a) - m);
    return d * d;
  });
}

}  // namespace qkv::lane_sum_forms

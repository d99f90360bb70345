// wrong.cpp: what the catalogue's mistakes share (wrong.h).
#include "tutorials/exercises/wrong/wrong.h"
#include <vector>

namespace qkv::exercises::wrong {

Tensor memory_order(const Tensor& t) {
  if (t.dtype() == Dtype::int64) {
    const int64_t* p = t.data_ptr<int64_t>();
    return from_vector(std::vector<int64_t>(p, p + t.numel()), t.shape());
  }
  const float* p = t.data_ptr<float>();
  return from_vector(std::vector<float>(p, p + t.numel()), t.shape());
}

}  // namespace qkv::exercises::wrong

// lane_sum_vector.cpp: lane_sum's vector form (GCC, Clang) for lane_sum_forms.h.
#define QKV_LANE_FORM vector
#include "tests/tensor/lane_sum_forms.inc"

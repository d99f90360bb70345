// lane_sum_portable.cpp: lane_sum's portable scalar form for lane_sum_forms.h (the build sets
// QKV_LANE_VECTORS=0 for this file: what compilers without GCC's vector types get).
#define QKV_LANE_FORM portable
#include "tests/tensor/lane_sum_forms.inc"

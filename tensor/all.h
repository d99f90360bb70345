// all.h: the whole tensor floor in one include, for programs and tests.
#pragma once

#include "tensor/allocator.h"
#include "tensor/elementwise.h"
#include "tensor/error.h"
#include "tensor/factory.h"
#include "tensor/flash_attention.h"
#include "tensor/fma_peak.h"
#include "tensor/gemm.h"
#include "tensor/join.h"
#include "tensor/matmul.h"
#include "tensor/print.h"
#include "tensor/random.h"
#include "tensor/reduce.h"
#include "tensor/softmax.h"
#include "tensor/tensor.h"
#include "tensor/thread_pool.h"
#include "tensor/view.h"

// environment.h: the environment variables qkv reads, and one check of all of them.
//
//   QKV_NUM_THREADS       worker threads, a whole number in [1, 1024] (thread_pool.h); unset:
//                         every hardware thread
//   QKV_FUSED             0: the composed ops everywhere; 1 or unset: the fused paths (fused.h)
//   QKV_INTRINSICS        0: plain loops beneath them too; 1 or unset: the hand-written
//                         intrinsics where the CPU has them (simd/intrinsics.h)
//   QKV_GEMM              ladder: every product on the ladder's step 5; production or unset:
//                         each product planned and run (tensor/gemm/plan.h)
//   QKV_GEMM_VERBOSE      1: each product's plan printed to stderr as it runs; 0 or unset: not
//   QKV_MAX_TENSOR_BYTES  the most bytes one tensor may take, a positive whole number
//                         (allocator.h); unset: the machine's memory
//
// Each is read where it is used, the first time it is needed. check_environment() reads all
// of them at once and throws a qkv::Error naming the first that is set to something else
// ("QKV_FUSED: 0 or 1, got \"false\""): a program calls it before its work starts, as every
// program under tutorials/ does (tutorials/common/program.h), so that a typo is one clear
// line, not a run with a setting the user did not ask for.
#pragma once

namespace qkv {

void check_environment();

}  // namespace qkv

// fma_peak.h: the most floating-point work this machine can do, measured. On each thread,
// independent chains of vector fused multiply-adds: enough of them that no instruction waits
// for another's result, few enough to stay in registers. No kernel can beat it, so it is the
// yardstick of every "share of peak" (lesson 23, bench/bench_matmul).
#pragma once

#include <cstdint>

namespace qkv {

// Runs `iterations` rounds of the chains on the calling thread; returns the flops done (one
// multiply-add is 2 flops). The chains use the instructions the GEMM's kernel uses: the build's
// vector registers, or, in an SSE build on a CPU with AVX2 and FMA, those (gemm_kernel.h).
double fma_chains(int64_t iterations);

// GFLOP/s of `threads` threads running fma_chains at the same time: the best of `repeats`
// runs of about 30 ms each (on a 4 GHz AVX-512 core), so starting the threads is lost in it.
double fma_peak_gflops(int threads, int64_t iterations = int64_t{1} << 23, int repeats = 5);

}  // namespace qkv

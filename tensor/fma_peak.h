// fma_peak.h: the most floating-point work this machine can do, measured. On each thread,
// independent chains of vector fused multiply-adds: enough of them that no instruction waits
// for another's result, few enough to stay in registers. No kernel can beat it, so it is the
// yardstick of every "share of peak" (lesson 24, bench/bench_matmul).
#pragma once

#include <cstdint>

namespace qkv {

// Runs `iterations` rounds of the chains on the calling thread; returns the flops done (one
// multiply-add is 2 flops). The chains use the instructions the GEMM's kernel uses: the build's
// vector registers, or, in an SSE build on a CPU with AVX2 and FMA, those (tensor/gemm/kernel.h).
double fma_chains(int64_t iterations);

// GFLOP/s of `threads` threads running fma_chains at the same time: the best of `repeats`
// runs of 2^23 iterations each by default, each timed from the moment the threads,
// all started and waiting, are let go together to the moment the last one ends.
double fma_peak_gflops(int threads, int64_t iterations = int64_t{1} << 23, int repeats = 5);

// Probes once more (fma_peak_gflops with these arguments) and returns the highest GFLOP/s read
// for `threads` threads in this process so far. A program sharing the cores can make a probe read
// low, never high, so over a run the highest reading is the nearest to the machine's ceiling. A
// benchmark that probes again after each of its timings and divides by this is not thrown by one
// probe that ran in a busy moment, which would put a training step above the peak.
double highest_fma_peak_gflops(int threads, int64_t iterations = int64_t{1} << 23, int repeats = 1);

}  // namespace qkv

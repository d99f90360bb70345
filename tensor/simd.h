// simd.h: which vector registers this build targets, decided once from the compiler's own
// target macros. The GEMM micro-kernels (gemm_kernel.cpp), the FMA-peak probe (fma_peak.cpp)
// and the exponentials' fast form (exp_into in vector_math.h, in AVX-512's or AVX2's
// intrinsics) are written for them; everything else lets the compiler vectorise plain loops.
//
//   QKV_SIMD_LANES  floats in one vector register of the build's target:
//                   16  AVX-512 (x86-64 with -march=native on a machine that has it)
//                    8  AVX2 with FMA (x86-64 from 2013 on, with -march=native)
//                    4  NEON (every aarch64: Apple Silicon, Graviton, Raspberry Pi 4/5)
//                    4  SSE (any other x86-64 build: the `portable` preset; its GEMM still
//                       runs an AVX2 kernel where the CPU has AVX2, chosen at run time)
//                    0  none: a compiler without GCC/Clang vector extensions (MSVC)
//   QKV_SIMD_NAME   the same in words, for what configure, lesson 24 and the benchmarks print.
//   QKV_AVX2_AT_RUN_TIME  1 in an SSE build of x86-64, which may assume SSE2 only but asks the
//                   CPU for AVX2 and FMA when it runs (cpu_has_avx2_fma): where they are there,
//                   its GEMM runs an AVX2 kernel (gemm_kernel.cpp) and the FMA-peak probe
//                   (fma_peak.cpp) measures with the same instructions. 0 elsewhere.
//
// The vectors are GCC/Clang vector extensions (`float __attribute__((vector_size(16)))` is 4
// floats in one register), so one source serves every width; where they are missing, the
// portable code paths run.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#if defined(__AVX512F__)
#define QKV_SIMD_LANES 16
#define QKV_SIMD_NAME "AVX-512"
#elif defined(__AVX2__) && defined(__FMA__)
#define QKV_SIMD_LANES 8
#define QKV_SIMD_NAME "AVX2"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define QKV_SIMD_LANES 4
#define QKV_SIMD_NAME "NEON"
#elif defined(__x86_64__) && defined(__SSE2__)
#define QKV_SIMD_LANES 4
#define QKV_SIMD_NAME "SSE"
#endif
#endif

#ifndef QKV_SIMD_LANES
#define QKV_SIMD_LANES 0
#define QKV_SIMD_NAME "none"
#endif

#if QKV_SIMD_LANES == 4 && defined(__x86_64__) && !defined(__AVX2__)
#define QKV_AVX2_AT_RUN_TIME 1
namespace qkv {
// Whether this CPU has AVX2 and FMA, asked once.
inline bool cpu_has_avx2_fma() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
}  // namespace qkv
#else
#define QKV_AVX2_AT_RUN_TIME 0
#endif

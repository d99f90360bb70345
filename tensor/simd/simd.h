// simd.h: which vector registers this build targets, decided once from the compiler's own
// target macros, and one type for a register of them (simd::Vec), as ggml maps its F32 vectors
// onto each target's. The GEMM micro-kernels (tensor/gemm/kernel.cpp), the FMA-peak probe
// (fma_peak.cpp), the lane sums (lanes.h) and the intrinsic forms of e^x (exp.h) are written
// for them; everything else lets the compiler vectorise plain loops.
//
//   QKV_SIMD_LANES  floats in one vector register of the build's target:
//                   16  AVX-512 (x86-64 with -march=native on a machine that has it)
//                    8  AVX2 with FMA (x86-64 from 2013 on, with -march=native)
//                    4  NEON (every aarch64: Apple Silicon, Graviton, Raspberry Pi 4/5)
//                    4  SSE (any other x86-64 build: the `portable` preset; its GEMM still
//                       runs an AVX2 kernel where the CPU has AVX2, chosen at run time)
//                    4  WebAssembly SIMD (the `wasm` preset, -msimd128: every browser since 2021)
//                    0  none: a compiler without GCC/Clang vector extensions (MSVC)
//   QKV_SIMD_NAME   the same in words, for what configure, lesson 24 and the benchmarks print.
//   QKV_AVX2_AT_RUN_TIME  1 in an SSE build of x86-64, which may assume SSE2 only but asks the
//                   CPU for AVX2 and FMA when it runs (cpu_has_avx2_fma): where they are there,
//                   its GEMM runs an AVX2 kernel (gemm/kernel.cpp) and the FMA-peak probe
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
#elif defined(__wasm_simd128__)
#define QKV_SIMD_LANES 4
#define QKV_SIMD_NAME "WebAssembly SIMD"
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

#if QKV_SIMD_LANES > 0
#include <cstring>
#if QKV_SIMD_LANES == 16 || QKV_SIMD_LANES == 8
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace qkv::simd {

constexpr int kLanes = QKV_SIMD_LANES;
// One vector register of floats, in GCC/Clang vector extensions: `a * b + c` on them is
// element by element, and `x * v` with a float x broadcasts x to every lane first.
typedef float Vec __attribute__((vector_size(4 * kLanes)));

// kLanes floats from p, and back: memcpy is the compiler's unaligned vector load and store.
inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vec v) {
  std::memcpy(p, &v, sizeof v);
}

// c + a * b for every lane: one fused multiply-add instruction (one rounding) where the target
// has one (AVX-512, AVX2, NEON), a multiply and then an add on SSE and WebAssembly SIMD, which
// have none, and the same at every optimisation level. Optimised, the GEMM's files are built with
// -ffp-contract=fast (tensor/CMakeLists.txt), and the compiler fuses `c + a * b` into the
// instruction, folding the broadcast of a and the load of b into it; unoptimised (-O0: a Debug
// build) it fuses nothing, and Clang not always alike in two functions, so there the
// instruction is spelt out.
#if defined(__OPTIMIZE__) || !(QKV_SIMD_LANES == 16 || QKV_SIMD_LANES == 8 || defined(__aarch64__))
[[gnu::always_inline]] inline Vec fmadd(float a, Vec b, Vec c) {
  return c + a * b;
}
#else
[[gnu::always_inline]] inline Vec fmadd(float a, Vec b, Vec c) {
#if QKV_SIMD_LANES == 16
  return reinterpret_cast<Vec>(
      _mm512_fmadd_ps(_mm512_set1_ps(a), reinterpret_cast<__m512>(b), reinterpret_cast<__m512>(c)));
#elif QKV_SIMD_LANES == 8
  return reinterpret_cast<Vec>(
      _mm256_fmadd_ps(_mm256_set1_ps(a), reinterpret_cast<__m256>(b), reinterpret_cast<__m256>(c)));
#else
  return reinterpret_cast<Vec>(
      vfmaq_n_f32(reinterpret_cast<float32x4_t>(c), reinterpret_cast<float32x4_t>(b), a));
#endif
}
#endif

}  // namespace qkv::simd
#endif

# native_tuning.cmake: which instructions the build may use, said out loud at configure time.
#
# With QKV_NATIVE on (the default), qkv is compiled for the CPU of the machine that builds it:
# -march=native (GCC, Clang; with -mprefer-vector-width=512 where that gives AVX-512),
# -mcpu=native where a compiler for ARM takes only that (older Clang releases, Apple's among
# them), /arch:AVX512 or /arch:AVX2 (MSVC, by what this machine has). Cross-compiling, this
# machine's CPU is not the target's, so there is no native tuning. Whatever happens is printed,
# never dropped silently, and so is the GEMM micro-kernel the flags select (tensor/simd/simd.h
# decides it from the compiler's target macros).
#
# Sets QKV_NATIVE_FLAGS (the flags added to every compile, possibly empty) and QKV_SIMD (the
# kernel's name: AVX-512, AVX2, NEON, SSE or none).
include(CheckCXXCompilerFlag)

set(QKV_NATIVE_FLAGS "")
if(EMSCRIPTEN)
  # WebAssembly (the wasm preset, tools/wasm.cmake): no CPU to tune for, but a choice of
  # instruction set. WebAssembly SIMD's 128-bit vectors (-msimd128) are in every browser since
  # 2021; OFF gives scalar WebAssembly, to compare the two.
  option(QKV_WASM_SIMD "WebAssembly SIMD (-msimd128) in a WebAssembly build" ON)
  if(QKV_WASM_SIMD)
    set(QKV_NATIVE_FLAGS -msimd128)
    set(qkv_tuning "WebAssembly with SIMD (-msimd128, or QKV_WASM_SIMD=OFF for scalar)")
  else()
    set(qkv_tuning "WebAssembly without SIMD (QKV_WASM_SIMD=OFF)")
  endif()
elseif(NOT QKV_NATIVE)
  set(qkv_tuning "off (QKV_NATIVE=OFF: code for any CPU of the target architecture)")
elseif(CMAKE_CROSSCOMPILING)
  set(qkv_tuning "off: cross-compiling for ${CMAKE_SYSTEM_NAME} ${CMAKE_SYSTEM_PROCESSOR}, "
                 "whose CPU this machine's -march=native would not describe")
elseif(MSVC)
  # MSVC has no -march=native: ask this CPU (cpuid) whether it has AVX-512F, else use AVX2,
  # which every x86-64 CPU since 2013 (Intel Haswell, AMD Excavator) has.
  file(WRITE ${CMAKE_BINARY_DIR}/qkv_has_avx512.cpp [=[
#include <immintrin.h>
#include <intrin.h>
int main() {
  int r[4];
  __cpuid(r, 0);
  if (r[0] < 7) return 1;
  __cpuid(r, 1);
  if (!(r[2] & (1 << 27))) return 1;                 // OSXSAVE: the OS saves vector state
  if ((_xgetbv(0) & 0xE6) != 0xE6) return 1;         // ... including the AVX-512 registers
  __cpuidex(r, 7, 0);
  return (r[1] & (1 << 16)) ? 0 : 1;                 // AVX512F
}
]=])
  try_run(qkv_avx512_run qkv_avx512_compiled ${CMAKE_BINARY_DIR}
          ${CMAKE_BINARY_DIR}/qkv_has_avx512.cpp)
  if(qkv_avx512_compiled AND qkv_avx512_run EQUAL 0)
    set(QKV_NATIVE_FLAGS /arch:AVX512)
  else()
    set(QKV_NATIVE_FLAGS /arch:AVX2)
  endif()
else()
  check_cxx_compiler_flag(-march=native QKV_HAS_MARCH_NATIVE)
  if(QKV_HAS_MARCH_NATIVE)
    set(QKV_NATIVE_FLAGS -march=native)
  else()
    check_cxx_compiler_flag(-mcpu=native QKV_HAS_MCPU_NATIVE)
    if(QKV_HAS_MCPU_NATIVE)
      set(QKV_NATIVE_FLAGS -mcpu=native)
    endif()
  endif()
  if(NOT QKV_NATIVE_FLAGS)
    set(qkv_tuning "off: ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} accepts neither "
                   "-march=native nor -mcpu=native")
    message(WARNING "qkv: QKV_NATIVE is ON, but ${CMAKE_CXX_COMPILER} accepts neither "
                    "-march=native nor -mcpu=native: building without native tuning.")
  endif()
endif()
string(JOIN "" qkv_tuning ${qkv_tuning})

# Which micro-kernel those flags give: compile tensor/simd/simd.h with them and read its name out of
# the object file (this works when cross-compiling too, where the program could not be run).
file(WRITE ${CMAKE_BINARY_DIR}/qkv_simd_name.cpp [=[
#include "tensor/simd/simd.h"
const char* qkv_simd_info = "QKV_SIMD_INFO[" QKV_SIMD_NAME "]";
int main(int argc, char**) { return qkv_simd_info[argc]; }
]=])
# (Emscripten's executable is JavaScript that loads a .wasm beside it: read its static library.)
if(EMSCRIPTEN)
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
endif()
try_compile(qkv_simd_compiled ${CMAKE_BINARY_DIR}/qkv_simd_name
            SOURCES ${CMAKE_BINARY_DIR}/qkv_simd_name.cpp
            CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${PROJECT_SOURCE_DIR}"
            COMPILE_DEFINITIONS ${QKV_NATIVE_FLAGS}
            COPY_FILE ${CMAKE_BINARY_DIR}/qkv_simd_name.bin)
unset(CMAKE_TRY_COMPILE_TARGET_TYPE)
set(QKV_SIMD "unknown")
if(qkv_simd_compiled)
  file(STRINGS ${CMAKE_BINARY_DIR}/qkv_simd_name.bin qkv_simd_info REGEX "QKV_SIMD_INFO\\[")
  if(qkv_simd_info MATCHES "QKV_SIMD_INFO\\[([^]]*)\\]")
    set(QKV_SIMD "${CMAKE_MATCH_1}")
  endif()
endif()
# With AVX-512, GCC and Clang still vectorize plain loops 256 bits at a time unless told to
# prefer 512: -march=native alone tunes them for the narrower registers. The GEMM's kernels use
# 512-bit registers by hand either way; the loops the compiler vectorizes (GELU's exponentials,
# the softmax, the sums of bias gradients) do twice the work an instruction at 512. Each lane
# does the same arithmetic at either width, so the numbers stay the same: the larger tiny GPT's
# weights after 30 steps were the same bits with and without it. What it gave is in
# bench/README.md ("A third host").
if(QKV_NATIVE_FLAGS AND QKV_SIMD STREQUAL "AVX-512" AND NOT MSVC)  # native tuning only
  check_cxx_compiler_flag(-mprefer-vector-width=512 QKV_HAS_PREFER_512)
  if(QKV_HAS_PREFER_512)
    list(APPEND QKV_NATIVE_FLAGS -mprefer-vector-width=512)
  endif()
endif()
if(QKV_NATIVE_FLAGS AND NOT EMSCRIPTEN)  # native tuning on: say with which flags, now that they are all chosen
  list(JOIN QKV_NATIVE_FLAGS " " qkv_tuning)
  set(qkv_tuning "on (${qkv_tuning})")
endif()
if(QKV_SIMD STREQUAL "none")
  set(qkv_kernel "portable (plain C++, no vector extensions in this compiler)")
elseif(QKV_SIMD STREQUAL "SSE")
  set(qkv_kernel "SSE, or AVX2 6x8 on a CPU with AVX2 and FMA (chosen at run time)")
else()
  set(qkv_kernel "${QKV_SIMD}")
endif()
message(STATUS "qkv: native tuning ${qkv_tuning}")
message(STATUS "qkv: GEMM micro-kernel: ${qkv_kernel} (tensor/gemm/kernel.cpp)")

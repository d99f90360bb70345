# wasm.cmake: the toolchain file of the `wasm` preset (CMakePresets.json): qkv compiled to
# WebAssembly with Emscripten, for the browser explorer (tutorials/explorer/) and for running the
# test suites under Node.js. It finds Emscripten from `emcc` on the PATH (Debian's emscripten
# package, or emsdk's after `source emsdk_env.sh`) and includes Emscripten's own toolchain file,
# which also makes Node.js the emulator that ctest runs the programs with.
# Whether it uses WebAssembly SIMD is QKV_WASM_SIMD's choice (tools/native_tuning.cmake).
find_program(QKV_EMCC emcc)
if(NOT QKV_EMCC)
  message(FATAL_ERROR "qkv: the wasm preset needs Emscripten's emcc on the PATH "
                      "(Debian/Ubuntu: apt-get install emscripten; or emsdk's emsdk_env.sh)")
endif()
get_filename_component(qkv_emcc_real "${QKV_EMCC}" REALPATH)
get_filename_component(qkv_emscripten_root "${qkv_emcc_real}" DIRECTORY)
# Debian's /usr/bin/emcc links to /usr/share/emscripten/wrapper, emsdk's is
# upstream/emscripten/emcc: either way Emscripten's cmake/ folder is beside it.
if(NOT EXISTS "${qkv_emscripten_root}/cmake/Modules/Platform/Emscripten.cmake")
  message(FATAL_ERROR "qkv: found ${QKV_EMCC}, but no cmake/Modules/Platform/Emscripten.cmake "
                      "beside it: run `emcmake cmake --preset wasm` instead")
endif()
# ctest runs the programs with Node.js. Emscripten 3.1's loader fetches the .wasm beside the
# program with fetch() where there is one, and Node.js 18 on has one that cannot read a file
# path: --no-experimental-fetch takes it away, so the loader reads the file instead.
find_program(QKV_NODE NAMES node nodejs)
if(QKV_NODE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${QKV_NODE};--no-experimental-fetch")
endif()
include("${qkv_emscripten_root}/cmake/Modules/Platform/Emscripten.cmake")

# C++ exceptions, which qkv reports every error with (qkv::Error): Emscripten leaves them off
# unless asked. WebAssembly's own exception instructions (-fwasm-exceptions) cost nothing until
# something throws; every browser has them since 2021, Node.js since 17.
set(CMAKE_CXX_FLAGS_INIT "-fwasm-exceptions")
# Memory grows as the tensors need it, up to WebAssembly's 4 GiB.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fwasm-exceptions -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB")

# Debian's Emscripten runs its JavaScript optimiser (while linking) with Node.js modules that
# Debian keeps in /usr/share/nodejs, where Node.js does not look unless NODE_PATH says so.
if(EXISTS /usr/share/nodejs/acorn)
  set(ENV{NODE_PATH} /usr/share/nodejs)  # for configure's own test programs
  set(CMAKE_CXX_LINKER_LAUNCHER "${CMAKE_COMMAND};-E;env;NODE_PATH=/usr/share/nodejs")
endif()

# 32-bit ARM Linux (armv7 with hard float: Raspberry Pi OS's 32-bit builds, older boards),
# cross-compiled with Debian's GCC (g++-arm-linux-gnueabihf) and run under qemu-user: a 32-bit
# target (size_t of 32 bits), whose bugs a 64-bit build never shows. CI's 32-bit target is the
# wasm preset; this one is for checking a change by hand, as .ci/run's aarch64 leg does:
#   build GoogleTest with this file (leg_configure in .ci/run), configure qkv with it and
#   -DGTest_DIR=..., build the test programs, and run each under qemu-arm -L /usr/arm-linux-gnueabihf
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# ctest runs every test program through the emulator.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf)

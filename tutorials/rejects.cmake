# One bad-input case of the training program (run by ctest): it must exit non-zero with exactly
# one line on stderr, "<program>: error: ...", matching EXPECT, and leave no file at --save.
# The case's flags come last, so they override the defaults given here.
#   cmake -DEXE=<16_train_tiny_gpt> -DDIR=<scratch folder> -DCASE=<name> -DEXPECT=<regex>
#         "-DARGS=<flag;value;...>" -P rejects.cmake
# In a cross build, -DEMULATOR="<emulator and its flags>" runs the program through it.
# In ARGS, {dir} stands for the case's folder and {not_utf8} for the bytes 0xff 0xfe. Fixture files (an empty file, a file that is not UTF-8, ...)
# are written here, so nothing binary has to live in the repository.
set(dir ${DIR}/rejects_${CASE})
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
file(WRITE ${dir}/empty.txt "")
string(ASCII 255 254 not_utf8)
file(WRITE ${dir}/not_utf8.txt "Life is short, ${not_utf8} eat dessert first")
file(WRITE ${dir}/short.txt "Life is short")
string(REPEAT "Life is short, eat dessert first.\n" 40 long)
file(WRITE ${dir}/long.txt "${long}")
file(WRITE ${dir}/corrupt.safetensors "this is not a safetensors file at all")
if(CASE STREQUAL "too_big")  # 300 MiB that take no disk: a sparse file (truncate(1), POSIX)
  execute_process(COMMAND truncate -s 300M ${dir}/big.txt)
endif()
string(REPLACE "{dir}" "${dir}" args "${ARGS}")
string(REPLACE "{not_utf8}" "${not_utf8}" args "${args}")  # two bytes that are not UTF-8

separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
execute_process(COMMAND ${emulator} ${EXE} --steps 1 --no_compare --save ${dir}/out.safetensors ${args}
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
include(${CMAKE_CURRENT_LIST_DIR}/error_line.cmake)
qkv_expect_error_line(${CASE} "${rc}" "${err}" "16_train_tiny_gpt" "${EXPECT}")
if(EXISTS ${dir}/out.safetensors)
  message(FATAL_ERROR "${CASE}: a checkpoint was left at --save despite the error")
endif()
file(GLOB leftovers ${dir}/out.safetensors*)
if(leftovers)
  message(FATAL_ERROR "${CASE}: half-written files were left behind: ${leftovers}")
endif()

# One bad environment variable (run by ctest): the program must exit non-zero with exactly one
# line "<PROGRAM>: error: ..." on stderr, matching EXPECT, before it does its work.
#   cmake -DEXE=<program> -DPROGRAM=<its name> -DCASE=<name> "-DSETTING=<VAR=value>"
#         -DEXPECT=<regex> -P env_rejects.cmake
# In a cross build, -DEMULATOR="<emulator and its flags>" runs the program through it.
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "${SETTING}" ${emulator} ${EXE}
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
include(${CMAKE_CURRENT_LIST_DIR}/error_line.cmake)
qkv_expect_error_line(${CASE} "${rc}" "${err}" "${PROGRAM}" "${EXPECT}")

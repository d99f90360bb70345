# A program whose output cannot be written (stdout on /dev/full, a full disk) must say so in one
# line and exit 1, not 0 (run by ctest on systems with /dev/full).
#   cmake -DEXE=<program> -DPROGRAM=<its name> -P stdout_full.cmake
execute_process(COMMAND ${EXE} OUTPUT_FILE /dev/full ERROR_VARIABLE err RESULT_VARIABLE rc)
include(${CMAKE_CURRENT_LIST_DIR}/error_line.cmake)
qkv_expect_error_line(stdout_full "${rc}" "${err}" "${PROGRAM}" "writing the output \\(stdout\\) failed")

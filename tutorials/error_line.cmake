# qkv_expect_error_line(CASE RC ERR PROGRAM EXPECT): what every bad-input case of a lesson must
# show: an exit status RC of 1 or 2 and, on stderr (ERR), exactly one line
# "<PROGRAM>: error: ...", which matches the regex EXPECT. Included by rejects.cmake and
# gpt2_rejects.cmake.
function(qkv_expect_error_line case rc err program expect)
  string(STRIP "${err}" err)
  # 1 for an error, 2 for a flag that cannot be used: anything else (0, or 134 from abort, 139
  # from a segfault, a signal's number) is not the program's own clean refusal.
  if(NOT rc EQUAL 1 AND NOT rc EQUAL 2)
    message(FATAL_ERROR "${case}: exit status ${rc}, expected 1 or 2 and an error matching '${expect}'")
  endif()
  if(NOT err MATCHES "^${program}: error: [^\n]*${expect}[^\n]*$")
    message(FATAL_ERROR "${case}: expected one line '${program}: error: ...${expect}...' on "
                        "stderr, got:\n${err}")
  endif()
endfunction()

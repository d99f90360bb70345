# qkv_expect_error_line(CASE RC ERR PROGRAM EXPECT): what every bad-input case of a lesson must
# show: a non-zero exit status RC and, on stderr (ERR), exactly one line
# "<PROGRAM>: error: ...", which matches the regex EXPECT. Included by rejects.cmake and
# gpt2_rejects.cmake.
function(qkv_expect_error_line case rc err program expect)
  string(STRIP "${err}" err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${case}: exit status 0, expected an error matching '${expect}'")
  endif()
  if(NOT err MATCHES "^${program}: error: [^\n]*${expect}[^\n]*$")
    message(FATAL_ERROR "${case}: expected one line '${program}: error: ...${expect}...' on "
                        "stderr, got:\n${err}")
  endif()
endfunction()

# tensor_comments.cmake: fails if a comment line in tensor/ quotes a measured figure.
#
# A comment says what a piece of code does and which memory traffic or dependency it removes;
# how fast it ran on one machine on one day is data, kept in bench/results/ and bench/notes/.
# A figure in a comment goes stale with the next compiler or CPU, and nothing tests it. A
# "figure" here is a number followed by %, GFLOP, ms, ns or x (1.25x): tile shapes (6 x 16),
# sizes (2^31, 4 KiB) and counts pass.
#
# cmake -DSOURCE_DIR=<the repository> -P tests/tensor_comments.cmake
file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/tensor/*.h"
     "${SOURCE_DIR}/tensor/*.cpp")
set(found 0)
foreach(source IN LISTS sources)
  # One list element per line: the characters a CMake list treats specially (";", and "[" and
  # "]", which would join the lines between an unmatched pair) are set aside first.
  file(READ "${SOURCE_DIR}/${source}" text)
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REPLACE "\n" ";|" lines "|${text}")  # "|": an empty line is still an element
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    string(FIND "${line}" "//" at)
    if(at EQUAL -1)
      continue()
    endif()
    string(SUBSTRING "${line}" ${at} -1 comment)
    if(comment MATCHES "[0-9] ?(%|GFLOP|ms([^A-Za-z0-9_]|$)|ns([^A-Za-z0-9_]|$))" OR
       comment MATCHES "[0-9]x([^A-Za-z0-9_]|$)")
      message("${source}:${number}: a measured figure in a comment: ${comment}")
      math(EXPR found "${found} + 1")
    endif()
  endforeach()
endforeach()
if(found GREATER 0)
  message(FATAL_ERROR "${found} comment lines in tensor/ quote measured figures: say the "
                      "mechanism there, and put the numbers in bench/notes/ (bench/README.md)")
endif()

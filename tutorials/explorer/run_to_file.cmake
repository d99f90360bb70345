# run_to_file.cmake: runs EXE and writes what it prints to OUT, whole or not at all (a failed
# run leaves no OUT behind, so the next build runs it again).
execute_process(COMMAND ${EXE} OUTPUT_FILE ${OUT}.partial RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.partial)
  message(FATAL_ERROR "${EXE} failed (${rc})")
endif()
file(RENAME ${OUT}.partial ${OUT})

# A lesson's figures say what they show (run by ctest): the lesson runs with --svg_dir in a
# scratch folder, then check_svg reads each figure as XML and checks its labels and series.
#   cmake -DEXE=<lesson> -DCHECK=<check_svg> -DDIR=<scratch folder> -DNAME=<lesson name>
#         "-DARGS=<flag>|<value>|..." "-DFIGURES=<file>|<check_svg flag>|<value>|...^^<file>|..."
#         -P svg_check.cmake
# Lists are written with '|' between items and '^^' between figures (a ';' would split the
# command line), so a label may hold spaces and commas.
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
set(dir ${DIR}/svg_check_${NAME})
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "^^" ";" figures "${FIGURES}")
execute_process(COMMAND ${emulator} ${EXE} ${args} --svg_dir ${dir} WORKING_DIRECTORY ${dir}
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME} failed (${rc}): ${err}")
endif()
foreach(figure IN LISTS figures)
  string(REPLACE "|" ";" parts "${figure}")
  list(POP_FRONT parts file)
  execute_process(COMMAND ${emulator} ${CHECK} ${dir}/${file} ${parts}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${err}${out}")
  endif()
  message(STATUS "${out}")
endforeach()

# One program's flags, the way every program under tutorials/ takes them (run by ctest):
#   --help             exit status 0, "usage: NAME ...", and every flag line says what it does
#   --no_such_flag 1   exit status 2 and one line "NAME: error: unknown flag ..."
#   --help=1 is not a flag value: the unknown-flag line again (--name=value is parsed as a flag)
#   cmake -DEXE=<program> -DNAME=<name> -P flags_check.cmake
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
execute_process(COMMAND ${emulator} ${EXE} --help OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^usage: ${NAME}")
  message(FATAL_ERROR "${NAME} --help: status ${rc}, expected 0 and a usage line, got:\n${out}${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
foreach(line IN LISTS lines)
  # "  --name METAVAR   what it does (default ...)": a description after the flag's column.
  if(line MATCHES "^  --" AND NOT line MATCHES "^  --[a-z_]+( [A-Z]+)? +[A-Za-z(]")
    message(FATAL_ERROR "${NAME} --help: a flag without a description: '${line}'")
  endif()
endforeach()
execute_process(COMMAND ${emulator} ${EXE} --no_such_flag 1 OUTPUT_QUIET ERROR_VARIABLE err
                RESULT_VARIABLE rc)
string(STRIP "${err}" err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^${NAME}: error: unknown flag \"--no_such_flag\"[^\n]*$")
  message(FATAL_ERROR "${NAME} --no_such_flag: expected status 2 and one error line, got ${rc}: ${err}")
endif()
execute_process(COMMAND ${emulator} ${EXE} --no_such_flag=1 OUTPUT_QUIET ERROR_VARIABLE err
                RESULT_VARIABLE rc)
string(STRIP "${err}" err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^${NAME}: error: unknown flag \"--no_such_flag\"")
  message(FATAL_ERROR "${NAME} --no_such_flag=1: expected the flag named without '=1', got ${rc}: ${err}")
endif()
message(STATUS "${NAME}: --help describes every flag; an unknown flag is one line, status 2")

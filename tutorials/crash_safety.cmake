# Crash safety of --save (run by ctest): kill the training program at many moments around the
# end of a run that saves a 25 MB checkpoint. Whatever moment the kill lands on, the target path
# holds either nothing or the complete checkpoint, never a partial one: save writes a temporary
# file and renames it into place (nn/serialize.cpp, write_file_atomic).
#   cmake -DEXE=<16_train_tiny_gpt> -DDIR=<scratch folder> -P crash_safety.cmake
# In a cross build, -DEMULATOR="<emulator and its flags>" runs the program through it.
set(flags --steps 0 --n_embd 256 --n_layer 8 --no_compare --sample 0 --eval_batches 1)
set(reference ${DIR}/crash_reference.safetensors)
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
set(target ${DIR}/crash_target.safetensors)
file(REMOVE ${reference} ${target})
string(TIMESTAMP t0 "%s%f")
execute_process(COMMAND ${emulator} ${EXE} ${flags} --save ${reference} OUTPUT_QUIET RESULT_VARIABLE rc)
string(TIMESTAMP t1 "%s%f")
if(NOT rc EQUAL 0 OR NOT EXISTS ${reference})
  message(FATAL_ERROR "the complete run failed (${rc})")
endif()
math(EXPR full_ms "(${t1} - ${t0}) / 1000")  # microseconds -> milliseconds
set(killed 0)
set(complete 0)
# Kills from 60% to 100% of a full run's time, where the checkpoint is being written.
foreach(percent RANGE 60 100 4)
  math(EXPR ms "${full_ms} * ${percent} / 100")
  if(ms LESS 10)
    set(ms 10)
  endif()
  math(EXPR whole "${ms} / 1000")
  math(EXPR frac "${ms} % 1000")
  string(LENGTH "${frac}" len)
  if(len EQUAL 1)
    set(frac "00${frac}")
  elseif(len EQUAL 2)
    set(frac "0${frac}")
  endif()
  file(REMOVE ${target})
  execute_process(COMMAND ${emulator} ${EXE} ${flags} --save ${target} TIMEOUT ${whole}.${frac}
                  OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    math(EXPR killed "${killed} + 1")
  endif()
  if(EXISTS ${target})
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${reference} ${target}
                    RESULT_VARIABLE same)
    if(NOT same EQUAL 0)
      message(FATAL_ERROR "killed after ${whole}.${frac} s: ${target} exists but is not the complete checkpoint")
    endif()
    math(EXPR complete "${complete} + 1")
  endif()
endforeach()
file(GLOB leftovers ${DIR}/crash_target.safetensors.tmp.*)
if(leftovers)
  file(REMOVE ${leftovers})  # a killed writer's temporary file: never at the target path
endif()
message(STATUS "full run ${full_ms} ms; ${killed} runs killed, ${complete} left a complete checkpoint, none a partial one")

# Determinism of the training program (run by ctest): the same flags on 1 thread, on 2, and on
# 2 again must print the same losses and save byte-identical checkpoints.
#   cmake -DEXE=<16_train_tiny_gpt> -DDIR=<scratch folder> -P determinism.cmake
# In a cross build, -DEMULATOR="<emulator and its flags>" runs the program through it.
set(flags --steps 30 --no_compare --sample 0 --log_every 10)
set(runs 1 2 2)
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
set(i 0)
foreach(threads IN LISTS runs)
  math(EXPR i "${i} + 1")
  execute_process(COMMAND ${emulator} ${EXE} ${flags} --threads ${threads} --save ${DIR}/determinism_${i}.safetensors
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${i} (--threads ${threads}) failed with ${rc}")
  endif()
  # The loss lines and the summary without its timing fields.
  string(REGEX MATCHALL "step [0-9]+ loss [0-9.]+" losses "${out}")
  string(REGEX MATCH "train_loss=[0-9.]+ val_loss=[0-9.]+ val_loss_last=[0-9.]+" summary "${out}")
  set(result_${i} "${losses} ${summary}")
  if(i GREATER 1)
    if(NOT result_${i} STREQUAL result_1)
      message(FATAL_ERROR "losses differ: run 1 '${result_1}' vs run ${i} (--threads ${threads}) '${result_${i}}'")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${DIR}/determinism_1.safetensors
                            ${DIR}/determinism_${i}.safetensors RESULT_VARIABLE same)
    if(NOT same EQUAL 0)
      message(FATAL_ERROR "checkpoints of run 1 and run ${i} (--threads ${threads}) differ")
    endif()
  endif()
endforeach()
if(result_1 STREQUAL " ")
  message(FATAL_ERROR "no losses parsed from the training program's output")
endif()
message(STATUS "bit-identical on 1 and 2 threads and across runs: ${result_1}")

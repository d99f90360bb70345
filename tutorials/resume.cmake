# Resuming is exact (run by ctest): --steps 40 at once, and --steps 20 --save then --resume to
# 40, print the same lines from step 20 on (losses, evaluations, summary and sample, bit for
# bit; the speed fields masked). With -DSCHEDULE=ON both runs use a warmup and a cosine decay,
# so the learning rate's schedule must carry on from the checkpoint too.
#   cmake -DEXE=<16_train_tiny_gpt> -DDIR=<scratch folder> [-DSCHEDULE=ON] -P resume.cmake
# In a cross build, -DEMULATOR="<emulator and its flags>" runs the program through it.
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
set(flags --log_every 1 --eval_every 10 --no_compare --sample 40)
set(tag plain)
if(SCHEDULE)
  list(APPEND flags --warmup_steps 8 --decay_steps 36)
  set(tag schedule)
endif()
set(ckpt ${DIR}/resume_${tag}.safetensors)
file(REMOVE ${ckpt})

# The printed lines that must repeat: "step K loss X", "eval step K: ...", the summary (without
# its speed) and the sample's header and text, one list element each.
function(result_lines out var)
  string(REPLACE ";" "," out "${out}")
  string(REGEX REPLACE " tokens_per_s=[0-9.]+ step_ms=[0-9.]+" "" out "${out}")
  string(REPLACE "\n" ";" lines "${out}")
  set(kept "")
  set(sample_next OFF)
  foreach(line IN LISTS lines)
    if(line MATCHES "^(step [0-9]+ loss|eval step|summary |sample )" OR sample_next)
      list(APPEND kept "${line}")
    endif()
    set(sample_next OFF)
    if(line MATCHES "^sample ")
      set(sample_next ON)  # and the sample itself, the line after
    endif()
  endforeach()
  set(${var} "${kept}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${emulator} ${EXE} ${flags} --steps 40 OUTPUT_VARIABLE whole
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the 40-step run failed (${rc})")
endif()
execute_process(COMMAND ${emulator} ${EXE} ${flags} --steps 20 --save ${ckpt} OUTPUT_QUIET
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT EXISTS ${ckpt})
  message(FATAL_ERROR "the 20-step run with --save failed (${rc})")
endif()
# --resume needs no other flag: the checkpoint holds the model, the data and the settings.
execute_process(COMMAND ${emulator} ${EXE} --resume ${ckpt} --steps 40 --sample 40
                OUTPUT_VARIABLE resumed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--resume failed (${rc}):\n${resumed}")
endif()
if(NOT resumed MATCHES "resumed [^\n]* at step 20 of 40")
  message(FATAL_ERROR "--resume did not say it resumed at step 20 of 40:\n${resumed}")
endif()
result_lines("${whole}" expected)
result_lines("${resumed}" got)
# The uninterrupted run's lines from the first one the resumed run printed.
list(GET got 0 first)
list(FIND expected "${first}" at)
if(at LESS 0)
  message(FATAL_ERROR "the resumed run's first line '${first}' is not in the 40-step run")
endif()
list(SUBLIST expected ${at} -1 expected)
if(NOT got STREQUAL expected)
  string(REPLACE ";" "\n" e "${expected}")
  string(REPLACE ";" "\n" g "${got}")
  message(FATAL_ERROR "the resumed run differs from the uninterrupted one.\nexpected:\n${e}\ngot:\n${g}")
endif()
list(LENGTH got n)
message(STATUS "${tag}: 20 + resume 20 printed the 40-step run's last ${n} lines exactly")

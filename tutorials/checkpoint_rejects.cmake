# A checkpoint that does not fit (run by ctest): one case each. The training program must exit
# non-zero with exactly one line "16_train_tiny_gpt: error: ..." matching EXPECT, write nothing
# at --save, and leave the checkpoint it was given as it was.
#   cmake -DEXE=<16_train_tiny_gpt> -DDIR=<scratch folder> -DCASE=<name> -DEXPECT=<regex>
#         "-DARGS=<flag;value;...>" -P checkpoint_rejects.cmake
# In ARGS, {dir} stands for the case's folder, which holds good.safetensors (a 2-step run of a
# small model on the built-in corpus), truncated.safetensors (its first half), foreign.bin (not
# a safetensors file) and other.txt (a text with characters the vocabulary lacks).
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
set(dir ${DIR}/checkpoint_rejects_${CASE})
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
execute_process(COMMAND ${emulator} ${EXE} --steps 2 --n_embd 16 --n_head 2 --n_layer 1 --no_compare
                        --sample 0 --save ${dir}/good.safetensors OUTPUT_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CASE}: the run that writes good.safetensors failed (${rc})")
endif()
# The truncated copy: the first half of the file's bytes (truncate(1), POSIX).
file(SIZE ${dir}/good.safetensors size)
math(EXPR half_bytes "${size} / 2")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy ${dir}/good.safetensors ${dir}/truncated.safetensors)
execute_process(COMMAND truncate -s ${half_bytes} ${dir}/truncated.safetensors RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${dir}/truncated.safetensors)  # no truncate(1): the case that needs it fails
endif()
file(WRITE ${dir}/foreign.bin "this is not a checkpoint at all, just some text")
# edited.safetensors: one value of good.safetensors's header changed, the same number of bytes
# (sed(1), POSIX), so the file still loads and the lesson's own checks must catch it.
# (An if chain, not a list: a CMake list would split a regex's [ ] in the wrong places.)
set(edit "")
if(CASE MATCHES "setting_not_boolean$")
  set(edit [[s/\(no_compare[^:]*\): true/\1: 1234/]])
elseif(CASE STREQUAL "seed_not_whole")
  set(edit [[s/\(seed[^:]*\): 1337/\1: 13.7/]])
elseif(CASE STREQUAL "lr_negative")
  set(edit [[s/\("lr[^:]*\): 0\.001/\1: -0.01/]])
elseif(CASE MATCHES "history_shape$")
  set(edit [[s/\(history\.eval":{"dtype":"F32","shape":\[\)2,4\]/\14,2]/]])
elseif(CASE STREQUAL "unknown_setting")
  set(edit [[s/log_every/log_everz/]])
elseif(CASE STREQUAL "generator_negative_seed")
  set(edit [[s/"generator":"1337 /"generator":"-337 /]])
endif()
if(NOT edit STREQUAL "")
  execute_process(COMMAND sed "${edit}" INPUT_FILE ${dir}/good.safetensors
                  OUTPUT_FILE ${dir}/edited.safetensors)
  file(SIZE ${dir}/edited.safetensors edited_size)
  file(SHA256 ${dir}/edited.safetensors edited_sum)
  file(SHA256 ${dir}/good.safetensors good_sum)
  if(NOT edited_size EQUAL size OR edited_sum STREQUAL good_sum)
    message(FATAL_ERROR "${CASE}: the edit \"${edit}\" did not change one value in place")
  endif()
endif()
file(WRITE ${dir}/other.txt "Zebras quietly jump over 12 lazy foxes.\n")
file(SHA256 ${dir}/good.safetensors before)
string(REPLACE "{dir}" "${dir}" args "${ARGS}")
execute_process(COMMAND ${emulator} ${EXE} --no_compare --sample 0 --save ${dir}/out.safetensors ${args}
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
include(${CMAKE_CURRENT_LIST_DIR}/error_line.cmake)
qkv_expect_error_line(${CASE} "${rc}" "${err}" "16_train_tiny_gpt" "${EXPECT}")
if(EXISTS ${dir}/out.safetensors)
  message(FATAL_ERROR "${CASE}: a checkpoint was written at --save despite the error")
endif()
file(SHA256 ${dir}/good.safetensors after)
if(NOT before STREQUAL after)
  message(FATAL_ERROR "${CASE}: the checkpoint given was changed")
endif()

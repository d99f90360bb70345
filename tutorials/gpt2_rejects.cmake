# One bad-input case of lesson 25 (run by ctest): it must exit non-zero with exactly one line
# on stderr, "25_real_gpt2: error: ...", matching EXPECT, and leave nothing in its temporary
# folder.
#   cmake -DEXE=<25_real_gpt2> -DDIR=<scratch folder> -DCASE=<name> -DEXPECT=<regex>
#         "-DARGS=<flag;value;...>" -P gpt2_rejects.cmake
# In ARGS, {dir} stands for the case's folder, which holds model folders made from the
# lesson's tiny GPT-2 (--write_tiny): tiny (whole), empty, no_weights (model.safetensors
# removed) and wide (config.json says n_embd 48, the weights have 32). {bad_utf8} stands for a
# prompt with a byte that is not UTF-8, {esc} for the byte 0x1b.
# In a cross build, -DEMULATOR="<emulator and its flags>" runs the program through it.
set(dir ${DIR}/gpt2_rejects_${CASE})
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir}/empty)
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
execute_process(COMMAND ${emulator} ${EXE} --write_tiny ${dir}/tiny OUTPUT_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CASE}: --write_tiny failed with status ${rc}")
endif()
foreach(variant no_weights wide)
  file(COPY ${dir}/tiny/ DESTINATION ${dir}/${variant})
endforeach()
file(REMOVE ${dir}/no_weights/model.safetensors)
file(READ ${dir}/wide/config.json config)
string(REPLACE "\"n_embd\": 32" "\"n_embd\": 48" config "${config}")
file(WRITE ${dir}/wide/config.json "${config}")

# The lesson's scratch folder (the tiny model, without --model) goes to ${dir}/tmp, which must
# be empty again after the error.
string(REPLACE "{dir}" "${dir}" args "${ARGS}")
string(ASCII 255 bad_byte)  # {bad_utf8}: a prompt that is not UTF-8
string(REPLACE "{bad_utf8}" "It is ${bad_byte} hot" args "${args}")
string(ASCII 27 esc)  # {esc}: the escape byte that starts a terminal's control sequences
string(REPLACE "{esc}" "${esc}" args "${args}")
file(MAKE_DIRECTORY ${dir}/tmp)
execute_process(COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${dir}/tmp ${emulator} ${EXE} ${args}
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
include(${CMAKE_CURRENT_LIST_DIR}/error_line.cmake)
qkv_expect_error_line(${CASE} "${rc}" "${err}" "25_real_gpt2" "${EXPECT}")
file(GLOB left ${dir}/tmp/*)
if(left)
  message(FATAL_ERROR "${CASE}: the lesson left files in its temporary folder: ${left}")
endif()
file(REMOVE_RECURSE ${dir})

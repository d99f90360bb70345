# Lesson 25's tokens from the tokenizer's two files alone (run by ctest): the tiny GPT-2's
# vocab.json and merges.txt in a folder without config.json or model.safetensors, then
# --tokenizer DIR --print_ids: the token ids, and every check passed.
#   cmake -DEXE=<25_real_gpt2> -DDIR=<scratch folder> -P gpt2_tokenizer_only.cmake
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
set(dir ${DIR}/gpt2_tokenizer_only)
file(REMOVE_RECURSE ${dir})
execute_process(COMMAND ${emulator} ${EXE} --write_tiny ${dir} OUTPUT_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--write_tiny failed with status ${rc}")
endif()
file(REMOVE ${dir}/config.json ${dir}/model.safetensors)
execute_process(COMMAND ${emulator} ${EXE} --tokenizer ${dir} --print_ids
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\nids:( [0-9]+)+\n" OR NOT out MATCHES "All checks passed")
  message(FATAL_ERROR "--tokenizer without weights failed (${rc}): ${err}\n${out}")
endif()
message(STATUS "the tokens from vocab.json and merges.txt alone")

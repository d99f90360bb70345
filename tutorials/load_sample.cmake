# A saved model samples with no other flag (run by ctest): a small model trained for a few
# steps and saved, then --load FILE --steps 0 --sample N --prompt TEXT, with no architecture
# flag: the checkpoint says the model's sizes and its vocabulary.
#   cmake -DEXE=<16_train_tiny_gpt> -DDIR=<scratch folder> -P load_sample.cmake
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
set(ckpt ${DIR}/load_sample.safetensors)
execute_process(COMMAND ${emulator} ${EXE} --steps 60 --lr 1e-2 --n_embd 24 --n_head 3 --n_layer 1 --block 16
                        --no_compare --sample 0 --save ${ckpt} OUTPUT_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the run that saves failed (${rc})")
endif()
execute_process(COMMAND ${emulator} ${EXE} --load ${ckpt} --steps 0 --sample 25 --prompt "The cat"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--load --steps 0 --sample --prompt failed (${rc}): ${err}")
endif()
if(NOT out MATCHES "sample \\(with the causal mask\\):\nThe cat[^\n]+")
  message(FATAL_ERROR "no sample that starts with the prompt:\n${out}")
endif()
if(NOT out MATCHES "summary params=[0-9]+ vocab=27 ")
  message(FATAL_ERROR "no summary line:\n${out}")
endif()
message(STATUS "sampled from the checkpoint with no architecture flag")

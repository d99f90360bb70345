# QKV_GEMM=ladder end to end (run by ctest): lesson 15 trains with every product on the ladder's
# step 5 (tensor/gemm/plan.h) and must print exactly what it prints with the production GEMM,
# losses and all.
#   cmake -DEXE=<15_transformer_block> "-DARGS=<its flags>" -P gemm_path.cmake
# In a cross build, -DEMULATOR="<emulator and its flags>" runs the program through it.
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
separate_arguments(args UNIX_COMMAND "${ARGS}")
foreach(path production ladder)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env QKV_GEMM=${path} ${emulator} ${EXE} ${args}
                  OUTPUT_VARIABLE out_${path} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "QKV_GEMM=${path}: the lesson failed with ${rc}:\n${out_${path}}")
  endif()
endforeach()
if(NOT out_production MATCHES "val_loss [0-9]")
  message(FATAL_ERROR "no losses in the lesson's output:\n${out_production}")
endif()
if(NOT out_production STREQUAL out_ladder)
  message(FATAL_ERROR "QKV_GEMM=ladder printed otherwise than the production GEMM:\n"
                      "${out_production}\n---- ladder ----\n${out_ladder}")
endif()
string(REGEX MATCHALL "val_loss [0-9.]+" losses "${out_production}")
message(STATUS "the same output with the production GEMM and the ladder: ${losses}")

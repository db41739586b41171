# Runs `bridgetune preprocess` on a golden input and compares the .npy with numpy's own save of Pillow's output.
file(REMOVE ${OUT})
execute_process(COMMAND ${BIN} preprocess ${GOLDEN}/cartoon_17x9.png --image_size 32 --format u8 --out ${OUT}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bridgetune preprocess failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${GOLDEN}/cartoon_17x9_eval32_u8.npy RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "${OUT} differs from ${GOLDEN}/cartoon_17x9_eval32_u8.npy")
endif()

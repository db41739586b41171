# `bridgetune preprocess` (eval, u8, 32 px, DCT scaling off) on files of each format: its .npy must equal, byte for
# byte, that of the same file's reference (tests/media/formats/<name>_eval32.png: torchvision's output on Pillow's
# convert("RGB"), written by scripts/golden/make_format_corpus.py), which a 32 px eval transform leaves as it is.
foreach(pair lossy.webp:lossy_webp animated.gif:animated_gif rle8.bmp:rle8_bmp ycbcr_jpeg.tif:ycbcr_jpeg_tif
             extraneous4.jpg:extraneous4_jpg)
  string(REPLACE ":" ";" pair ${pair})
  list(GET pair 0 file)
  list(GET pair 1 stem)
  foreach(input ${file} ${stem}_eval32.png)
    file(REMOVE ${OUT_DIR}/${input}.npy)
    execute_process(COMMAND ${BIN} preprocess ${FORMATS}/${input} --image_size 32 --format u8 --jpeg_dct_scaling off
                            --out ${OUT_DIR}/${input}.npy RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "bridgetune preprocess ${input} failed (${rc}): ${err}")
    endif()
  endforeach()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT_DIR}/${file}.npy ${OUT_DIR}/${stem}_eval32.png.npy
                  RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    message(FATAL_ERROR "preprocess ${file} differs from its Pillow + torchvision reference ${stem}_eval32.png")
  endif()
endforeach()

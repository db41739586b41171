# Tools found rather than assumed at fixed paths (included by the top-level CMakeLists.txt).
#
# nvcc, where the CUDA kernels may be built: -DCMAKE_CUDA_COMPILER or $CUDACXX as given; else nvcc on PATH, then
# $CUDA_HOME/bin, $CUDA_PATH/bin and /usr/local/cuda/bin (NVIDIA's installers put it there, often not on PATH). It
# becomes CMAKE_CUDA_COMPILER for enable_language(CUDA), and its toolkit folder BT_CUDA_ROOT (for nccl.h) and
# CUDAToolkit_ROOT, so FindCUDAToolkit (cmake/cuda_guards.cmake, src/cuda), which does not look in $CUDA_HOME,
# finds the same toolkit; a distribution's /usr/bin/nvcc is left to FindCUDAToolkit, which resolves that one itself.
set(BT_CUDA_ROOT "")
if(NOT BT_CUDA STREQUAL "OFF" AND NOT BT_SANITIZE AND NOT BT_FUZZ)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(BT_NVCC nvcc DOC "nvcc for the CUDA kernels")
    if(NOT BT_NVCC)
      find_program(BT_NVCC nvcc PATHS ENV CUDA_HOME ENV CUDA_PATH /usr/local/cuda PATH_SUFFIXES bin NO_DEFAULT_PATH)
    endif()
    if(BT_NVCC)
      set(CMAKE_CUDA_COMPILER ${BT_NVCC})
    endif()
  endif()
  set(_bt_nvcc "${CMAKE_CUDA_COMPILER}")
  if(NOT _bt_nvcc AND DEFINED ENV{CUDACXX})
    set(_bt_nvcc "$ENV{CUDACXX}")
  endif()
  if(_bt_nvcc)
    get_filename_component(BT_CUDA_ROOT "${_bt_nvcc}" DIRECTORY)
    get_filename_component(BT_CUDA_ROOT "${BT_CUDA_ROOT}" DIRECTORY)
    if(NOT BT_CUDA_ROOT MATCHES "^/(usr)?$" AND NOT DEFINED CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT})
      set(CUDAToolkit_ROOT "${BT_CUDA_ROOT}")
    endif()
  endif()
  unset(_bt_nvcc)
endif()

# Python, for the tests that need torch (the torch.save fixtures, the HF recipe, the GPU peer's check) and as the
# Python module's interpreter: Debian's /usr/bin/python3 when it exists, because its python3-torch is the torch those
# tests compare against and a python3 earlier on PATH (pyenv, a venv) usually has none; else python3 on PATH.
# -DBT_PYTHON=... picks another; -DPython_EXECUTABLE=... the module's alone (src/python).
find_program(BT_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH DOC "python3 for the tests and the Python module")
if(NOT BT_PYTHON)
  find_program(BT_PYTHON NAMES python3 python DOC "python3 for the tests and the Python module")
endif()

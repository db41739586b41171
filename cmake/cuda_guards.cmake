# Guards for building against a CUDA toolkit newer than the libtorch's CMake files expect (CUDA 13 with a
# torch 2.x wheel), included before find_package(Torch) whenever BT_CUDA is not OFF. Each does nothing where the
# toolkit or the cache already provides what it stands in for:
#   - CUDA 13 moved Thrust/CUB/libcu++ (CCCL) to include/cccl, which nvcc searches but g++ does not: it becomes
#     BT_CUDA_CCCL_DIR, a system include of every target using a CUDA libtorch (its headers include <cub/...>
#     and <cuda/std/...> from plain C++ files too); a CPU libtorch's targets are left as they are.
#   - torch's cuda.cmake looks for the NVTX3 headers in its own source tree (absent from an install) and else
#     links CUDA::nvToolsExt, a library CUDA 12.9+ no longer ships: nvtx3_dir is pre-seeded with the toolkit's
#     header-only NVTX3, and a header-only CUDA::nvToolsExt stands in where FindCUDAToolkit finds none.
find_package(CUDAToolkit QUIET)
if(NOT CUDAToolkit_FOUND)
  return()
endif()
set(_bt_cuda_inc "")
foreach(d IN LISTS CUDAToolkit_INCLUDE_DIRS)
  if(EXISTS "${d}/cuda_runtime.h")
    set(_bt_cuda_inc "${d}")
    break()
  endif()
endforeach()
if(NOT _bt_cuda_inc)
  return()
endif()
if(EXISTS "${_bt_cuda_inc}/cccl/cub" AND NOT EXISTS "${_bt_cuda_inc}/cub")
  set(BT_CUDA_CCCL_DIR "${_bt_cuda_inc}/cccl")  # CMakeLists.txt adds it to a CUDA libtorch's interface
endif()
if(EXISTS "${_bt_cuda_inc}/nvtx3/nvToolsExt.h")
  if(NOT nvtx3_dir)
    set(nvtx3_dir "${_bt_cuda_inc}" CACHE PATH "NVTX3 headers for torch's CMake (the CUDA toolkit's)")
  endif()
  if(NOT TARGET CUDA::nvToolsExt)
    add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
    target_include_directories(CUDA::nvToolsExt INTERFACE "${_bt_cuda_inc}")
    message(STATUS "CUDA ${CUDAToolkit_VERSION}: no libnvToolsExt; header-only NVTX3 stands in")
  endif()
endif()
unset(_bt_cuda_inc)

// Debian's CPU libtorch ships the c10/cuda headers without the file its CUDA build generates; enough of it for
// the syntax check of the CUDA-libtorch branches (tests/train/CMakeLists.txt, target check_cuda_torch_syntax).
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS

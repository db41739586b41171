#!/usr/bin/python3
"""GEMM throughput on this CPU: libtorch's float32 path (OpenBLAS under Debian's libtorch) vs oneDNN's dnnl_sgemm
(libdnnl.so.2, which that libtorch links; what src/kernels/gemm/gemm.cpp calls), and torch's bf16 mm (what autocast
runs) vs oneDNN's dnnl_gemm_bf16bf16f32 (what src/kernels/gemm/gemm.cpp runs under bf16 autocast), on the Linear shapes of the
base preset (PRESET=small: the small preset's) at 288 px, batch 8. One process per thread setting:

    OPENBLAS_NUM_THREADS=1 TT=2 /usr/bin/python3 bench/model/gemm_bench.py   # torch threads 2, OpenBLAS pinned
    OPENBLAS_NUM_THREADS=2 TT=2 /usr/bin/python3 bench/model/gemm_bench.py   # OpenBLAS on both cores
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 TT=1 /usr/bin/python3 bench/model/gemm_bench.py

Prints the median of 5 calls per shape and kernel in ms and GFLOP/s, and the largest difference to torch's result.
"""
import ctypes
import os
import time

import torch

torch.set_num_threads(int(os.environ.get("TT", "2")))
sgemm = ctypes.CDLL("libdnnl.so.2").dnnl_sgemm  # row-major: C = alpha op(A) op(B) + beta C
sgemm.argtypes = [ctypes.c_char, ctypes.c_char] + [ctypes.c_int64] * 3 + [ctypes.c_float, ctypes.c_void_p,
                  ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float, ctypes.c_void_p, ctypes.c_int64]


gemm_bf16 = ctypes.CDLL("libdnnl.so.2").dnnl_gemm_bf16bf16f32  # the same on bf16 operands, float32 C
gemm_bf16.argtypes = sgemm.argtypes


def dnnl_linear_bf16(x, w, out):  # what src/kernels/gemm/gemm.cpp runs under bf16 autocast, before its rounding pass
    m, k = x.shape
    n = w.shape[0]
    assert gemm_bf16(b"N", b"T", m, n, k, 1.0, x.data_ptr(), k, w.data_ptr(), k, 0.0, out.data_ptr(), n) == 0


def dnnl_linear(x, w, out):  # out[M, N] = x[M, K] w[N, K]^T
    m, k = x.shape
    n = w.shape[0]
    assert sgemm(b"N", b"T", m, n, k, 1.0, x.data_ptr(), k, w.data_ptr(), k, 0.0, out.data_ptr(), n) == 0


def median_time(f):
    f()
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[2]


SHAPES = {"base": [(8 * 325, 768, 3072), (8 * 325, 3072, 768), (8 * 325, 768, 768), (8 * 40, 768, 3072)],
          "small": [(8 * 325, 256, 768), (8 * 325, 256, 1024), (8 * 325, 1024, 256), (8 * 40, 256, 1024)]}
for m, k, n in SHAPES[os.environ.get("PRESET", "base")]:
    x, w, out = torch.randn(m, k), torch.randn(n, k), torch.empty(m, n)
    dnnl_linear(x, w, out)
    print(f"[{m}, {k}] x [{k}, {n}]: max |oneDNN - torch| = {(out - x @ w.t()).abs().max().item():.2e}")
    xb, wb = x.bfloat16(), w.bfloat16()
    for name, f in [("torch fp32", lambda: torch.mm(x, w.t())), ("oneDNN fp32", lambda: dnnl_linear(x, w, out)),
                    ("torch bf16", lambda: torch.mm(xb, wb.t())),
                    ("oneDNN bf16", lambda: dnnl_linear_bf16(xb, wb, out))]:
        t = median_time(f)
        print(f"  {name:12s} {t * 1e3:7.1f} ms {2 * m * k * n / t / 1e9:6.0f} GFLOP/s")

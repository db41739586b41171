// Torch-free entry points of bt_model for the CLI (so the command files need not include torch/torch.h).
#pragma once
#include <cstdint>
#include <string>

#include "model/config.h"

namespace bt::model {

// Parameters of the head model built from `c` (constructed on the meta device: nothing is allocated).
// head: contrastive | itm | mlm.
int64_t parameter_count(const BridgeTowerConfig& c, const std::string& head = "contrastive");

// A few lines describing the shapes of `c`.
std::string describe(const BridgeTowerConfig& c);

// Runs BridgeTowerForContrastiveLearning from `model_dir` in eval mode on the batch file `batch_path`
// (pixel_values F32 [B,3,S,S], input_ids and attention_mask integer [B,L]) and writes text_embeds,
// image_embeds, cross_embeds, logits and loss to `out_path` (safetensors, F32). max_model_bytes: as
// --max_model_bytes (model/memory_budget.h; 0: the machine's memory).
void forward_file(const std::string& model_dir, const std::string& batch_path, const std::string& out_path,
                  uint64_t max_model_bytes = 0);

// torch's intra-op threads for a run: `requested` when > 0, else on the CPU the cores the loader workers leave
// free (at least 1; oversubscribing -- torch's OpenMP pool spinning against the workers -- made tiny-model steps
// ~9x slower on 2 cores), else 0 (torch's default). The one rule for train, bench, evaluate, encode and the final
// evaluations, which pass their model's parameter count: from kComputeBoundParameters on (the small preset and up)
// a sample's forward (and backward) is ~100x its image's decode, the workers mostly wait on a full queue, and every
// core goes to the model (2 cores, 2 workers: encode base at 288 px 1.6x the images/s of one thread, train small
// 1.56x the samples/s; docs/PERFORMANCE.md). "The cores" are this process's share of the machine: the machine's
// divided among `local_processes` (LOCAL_WORLD_SIZE: data-parallel ranks on one host), so N local CPU ranks do not
// each take every core.
constexpr int64_t kComputeBoundParameters = 20'000'000;
int torch_threads_for(int requested, int loader_workers, bool on_cpu, int64_t model_parameters,
                      int local_processes = 1);

// Torch intra-op threads (n <= 0: all cores); OpenBLAS, if loaded, is pinned to 1 thread so it does not
// oversubscribe on top of torch's pool.
void configure_torch_threads(int n);

// How many threads an at::parallel_for in the model's own CPU kernels uses now: torch's intra-op threads, or 1 where
// bt_model was compiled without OpenMP (at::parallel_for is a header template that then runs serially).
int model_kernel_threads();

// Torch's CPU tensors from here on come from an allocator under which a freed block is reused by the next request
// of its size (runtime.cpp says why c10's does not); with bt::keep_freed_memory_for_reuse() this keeps a training
// step's activations off fresh, page-faulting memory. A no-op where BRIDGETUNE_KEEP_FREED_MEMORY=0.
void use_reusing_cpu_allocator();

// One line for a bf16 run on the CPU where bf16 is emulated (no AVX512_BF16 or AMX-BF16, or ONEDNN_MAX_CPU_ISA caps
// it): how it runs and what it costs against float32; "" where bf16 is native.
std::string cpu_bf16_note();

}  // namespace bt::model

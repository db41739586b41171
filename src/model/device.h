// --device for train and evaluate, parsed in one place; the intra-op thread count that goes with it; and the
// memory a run holds there.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "model/api.h"  // torch_threads_for, kComputeBoundParameters

namespace bt::model {

// cpu, cuda or cuda:N; fails (naming --device) on anything else and on cuda when libtorch sees no CUDA device.
torch::Device parse_device(const std::string& device);

int64_t parameter_numel(const torch::nn::Module& m);  // the values in m's parameters
// Inference runs (evaluate, encode, the recipe's evaluations): on the CPU, configures torch's threads for model m
// by that rule; elsewhere nothing.
void configure_inference_threads(int requested, int loader_workers, const torch::Device& device,
                                 const torch::nn::Module& m);

// The memory a run holds on `device`, in bytes, for bench's memory columns and `bench --find_max_batch`: on the
// CPU this process's resident memory (common/process_memory.h), on CUDA the caching allocator's allocated bytes
// (torch.cuda.memory_allocated / max_memory_allocated). reset_peak_memory() restarts the peak. 0 where unknown.
uint64_t memory_bytes(const torch::Device& device);
uint64_t peak_memory_bytes(const torch::Device& device);
void reset_peak_memory(const torch::Device& device);

}  // namespace bt::model

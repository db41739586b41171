// --device for train and evaluate, parsed in one place; the intra-op thread count that goes with it; and the
// memory a run holds there.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace bt::model {

// cpu, cuda or cuda:N; fails (naming --device) on anything else and on cuda when libtorch sees no CUDA device.
torch::Device parse_device(const std::string& device);

// torch's intra-op threads for a run: `requested` when > 0, else on the CPU the cores the loader workers leave
// free (at least 1; oversubscribing -- torch's OpenMP pool spinning against the workers -- made tiny-model steps
// ~9x slower on 2 cores), else 0 (torch's default). The one rule for train, evaluate, encode and the final
// evaluations. Inference runs pass their model's parameter count: from kComputeBoundParameters on (the small
// preset and up) the forward is ~100x an image's decode, the workers mostly wait on a full queue, and every core
// goes to the model (base at 288 px, encode on 2 cores: 1.6x the images/s of one thread; docs/PERFORMANCE.md).
// Training keeps the loader-first rule (not measured for large models yet).
constexpr int64_t kComputeBoundParameters = 20'000'000;
int torch_threads_for(int requested, int loader_workers, const torch::Device& device, int64_t inference_parameters = 0);
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

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
// ~9x slower on 2 cores), else 0 (torch's default). The one rule for train, evaluate and the final evaluations.
int torch_threads_for(int requested, int loader_workers, const torch::Device& device);

// The memory a run holds on `device`, in bytes, for bench's memory columns and `bench --find_max_batch`: on the
// CPU this process's resident memory (common/process_memory.h), on CUDA the caching allocator's allocated bytes
// (torch.cuda.memory_allocated / max_memory_allocated). reset_peak_memory() restarts the peak. 0 where unknown.
uint64_t memory_bytes(const torch::Device& device);
uint64_t peak_memory_bytes(const torch::Device& device);
void reset_peak_memory(const torch::Device& device);

}  // namespace bt::model

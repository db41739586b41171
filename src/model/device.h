// --device for train and evaluate, parsed in one place; and the intra-op thread count that goes with it.
#pragma once
#include <torch/torch.h>

#include <string>

namespace bt::model {

// cpu, cuda or cuda:N; fails (naming --device) on anything else and on cuda when libtorch sees no CUDA device.
torch::Device parse_device(const std::string& device);

// torch's intra-op threads for a run: `requested` when > 0, else on the CPU the cores the loader workers leave
// free (at least 1; oversubscribing -- torch's OpenMP pool spinning against the workers -- made tiny-model steps
// ~9x slower on 2 cores), else 0 (torch's default). The one rule for train, evaluate and the final evaluations.
int torch_threads_for(int requested, int loader_workers, const torch::Device& device);

}  // namespace bt::model

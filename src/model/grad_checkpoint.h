// Gradient checkpointing (HF's --gradient_checkpointing; torch.utils.checkpoint's reentrant form): a segment of the
// forward (a transformer layer, a cross-modal step) keeps only its inputs; backward runs it again with autograd and
// backpropagates through the recomputed activations. Memory: one segment's activations at a time instead of all
// of them; cost: one more forward per segment.
//
// Contract:
//  - checkpointed(fn, inputs) returns fn(inputs). With grad mode on and an input requiring grad, fn's activations
//    are not kept; backward recomputes fn under the RNG states (CPU and the inputs' CUDA device) and the autocast
//    state the forward had, so dropout draws the same masks, then restores the RNG (torch's fork_rng). The
//    parameters fn uses get their gradients from that inner backward. Otherwise fn runs as it is.
//  - fn must be a pure function of its inputs, the parameters and the RNG (constants such as masks may be captured)
//    and return tensors that depend on the inputs.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace bt::model {

using Tensors = std::vector<torch::Tensor>;
using Segment = std::function<Tensors(const Tensors&)>;

Tensors checkpointed(const Segment& fn, const Tensors& inputs);

}  // namespace bt::model

#include "model/memory_budget.h"

#include <algorithm>

#include "common/error.h"
#include "common/machine_memory.h"
#include "model/api.h"

namespace bt::model {

ModelMemory estimate_model_memory(const BridgeTowerConfig& c, const ModelBudget& b) {
  ModelMemory m;
  m.parameters = parameter_count(c, "contrastive") + std::max<int64_t>(b.extra_parameters, 0);
  m.weights = uint64_t(m.parameters) * 4;
  if (b.training) m.optimizer = 3 * m.weights;  // gradients + AdamW's two moments, float32 like the weights
  // In double: a hostile image_size times a batch must not wrap before it is compared.
  const double S = c.vision.image_size, grid = double(c.vision.image_size / c.vision.patch_size);
  const double tokens = grid * grid + 1, states = b.training ? c.vision.num_hidden_layers : 2;
  const double act = double(std::max(b.batch, 1)) * 4.0 * (3.0 * S * S + states * tokens * c.vision.hidden_size);
  m.activations = act >= 1.8e19 ? UINT64_MAX / 4 : uint64_t(act);
  return m;
}

void check_model_memory(const BridgeTowerConfig& c, const ModelBudget& b) {
  const ModelMemory m = estimate_model_memory(c, b);
  const bool flag = b.max_bytes > 0;
  const uint64_t limit = flag ? b.max_bytes : machine_memory_bytes();
  if (m.total() <= limit) return;
  const std::string what = c.source.empty() ? std::string("the model") : c.source;
  const std::string parts = b.training ? str(bytes_str(m.weights), " of float32 weights + ", bytes_str(m.optimizer),
                                             " of gradients and AdamW state + ", bytes_str(m.activations),
                                             " of activations")
                                       : str(bytes_str(m.weights), " of float32 weights + ", bytes_str(m.activations),
                                             " of activations");
  const std::string extra = b.extra_parameters > 0 ? str(", ", b.extra_parameters, " of them the LoRA adapters of ",
                                                         b.extra_what.empty() ? "adapter_config.json" : b.extra_what)
                                                   : std::string();
  fail(what, ": this model would need about ", bytes_str(m.total()), " (", m.parameters, " parameters", extra, ": ",
       parts, ", batch ", b.batch, "), more than ",
       flag ? str("--max_model_bytes ", b.max_bytes) : str("this machine's ", bytes_str(limit), " of free memory"),
       flag ? ": use a smaller model or raise --max_model_bytes"
            : ": use a smaller model (check hidden_size, the layer counts and image_size) or a machine with more "
              "memory (--max_model_bytes overrides the limit)");
}

}  // namespace bt::model

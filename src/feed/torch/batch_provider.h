// Where the training step gets its batches: one interface, three implementations, one factory.
//
//   start(epoch, first_batch, num_batches)  begin batches [first_batch, first_batch + num_batches) of `epoch`
//                                           (a resumed run starts mid-epoch)
//   next(&wait)      the next batch as model inputs on the device, or nullopt when the segment is done;
//                    wait = seconds this call blocked (the step's data wait)
//   prefetch(&wait)  called right after a step's kernels are enqueued (backward returned, before the host syncs):
//                    a provider whose host work can overlap the GPU does it now; the others do nothing
//   stop()           ends the segment (start() may follow); also run by the destructor
//
// Implementations: InMemoryBatches (batches made once and cycled: bench's upper bound; start() does not rewind),
// BatchSource (the CPU loader's batches, batch_source.h) and GpuMediaSource (decode-only batches resized on the
// GPU, gpu_media.h). make_batch_provider() is the one place that picks between them. Tokenize-and-upload is
// written once, upload_captions(), and used by every provider.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/defaults.h"
#include "loader/loader.h"
#include "text/tokenizer.h"

namespace bt::feed {

struct ModelBatch {
  loader::BatchPtr host;  // owns the pixel buffer a CPU tensor points into
  torch::Tensor pixels, input_ids, attention_mask;
  std::vector<std::string> image_keys;
  int64_t size = 0;
  std::vector<int32_t> text_lengths;  // each row's real tokens, on the host: the step's FLOP count (model/flops.h)
};

// Tokenizes `captions` (padded to the longest, cut at max_len) into m.input_ids / m.attention_mask on `device`:
// plain tensors on CPU, pinned staging and an asynchronous copy on CUDA (the host ids may go right away).
void upload_captions(ModelBatch& m, const std::vector<std::string>& captions, const text::Tokenizer& tok, int max_len,
                     const torch::Device& device);

// Host batch -> tensors on `device` (CPU: wraps the loader's buffer without a copy).
ModelBatch to_model_batch(loader::BatchPtr b, const text::Tokenizer& tok, int max_len, const torch::Device& device);

class BatchProvider {
 public:
  virtual ~BatchProvider() = default;
  virtual void start(uint64_t epoch, size_t first_batch, size_t num_batches) = 0;
  virtual std::optional<ModelBatch> next(double* wait_s) = 0;
  virtual void prefetch(double* wait_s) { *wait_s = 0; }
  virtual void stop() = 0;
};

// `count` batches taken once from `from` (epoch 0 from its start), their pixels copied out of the loader's
// buffers; next() cycles through them without waiting, across epochs.
class InMemoryBatches : public BatchProvider {
 public:
  InMemoryBatches(BatchProvider& from, size_t count);
  void start(uint64_t, size_t, size_t) override {}
  std::optional<ModelBatch> next(double* wait_s) override;
  void stop() override {}

 private:
  std::vector<ModelBatch> batches_;
  size_t next_ = 0;
};

struct ProviderOptions {
  int max_seq_length = defaults::kMaxSeqLength;
  torch::Device device = torch::kCPU;
  bool background = true;      // BatchSource: a thread prepares the next batch (dataloader_num_workers > 0)
  int in_memory_batches = 0;   // > 0: InMemoryBatches of this many (at most one epoch's)
  bool media_pipeline = false; // GpuMediaSource (the loader must run with output_decoded)
  int image_size = 0;          // GpuMediaSource's output size
  bool bf16 = false;           // GpuMediaSource's output dtype
};

// The provider for these options over `loader`; batches_per_epoch caps the in-memory set. Throws where the
// combination is impossible (in-memory batches with the media pipeline; the media pipeline without CUDA).
std::unique_ptr<BatchProvider> make_batch_provider(loader::Loader& loader, const text::Tokenizer& tok,
                                                   const ProviderOptions& o, size_t batches_per_epoch);

}  // namespace bt::feed

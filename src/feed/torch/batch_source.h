// The CPU loader's batch provider (batch_provider.h): turns the loader's host batches into model inputs (tokenized
// captions and the pixel tensor on the target device), one batch ahead of the training step. With background
// = true a thread pulls the next batch from the loader, tokenizes it and starts its host-to-device copy (pinned
// memory, non_blocking on CUDA) while the current step runs; with false (dataloader_num_workers 0, PyTorch's
// "load in the main process") everything happens inside next(), so its cost shows up as data wait.
#pragma once
#include <torch/torch.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "loader/loader.h"
#include "text/tokenizer.h"
#include "feed/torch/batch_provider.h"

namespace bt::feed {

class BatchSource : public BatchProvider {
 public:
  BatchSource(loader::Loader& loader, const text::Tokenizer& tok, int max_len, torch::Device device, bool background);
  ~BatchSource() override;
  BatchSource(const BatchSource&) = delete;
  BatchSource& operator=(const BatchSource&) = delete;

  // Batches [first_batch, first_batch + num_batches) of `epoch`.
  void start(uint64_t epoch, size_t first_batch, size_t num_batches) override;
  // The next batch, or nullopt when the segment is done; *wait_s = seconds this call blocked.
  std::optional<ModelBatch> next(double* wait_s) override;
  void stop() override;

 private:
  void produce();
  loader::Loader& loader_;
  const text::Tokenizer& tok_;
  int max_len_;
  torch::Device device_;
  bool background_;
  size_t remaining_ = 0;  // inline mode
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ModelBatch> ready_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
};

}  // namespace bt::feed

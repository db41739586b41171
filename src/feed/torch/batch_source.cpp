#include "feed/torch/batch_source.h"

#include <chrono>

namespace bt::feed {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
constexpr size_t kReadyAhead = 1;  // batches finished ahead of the step, beyond the loader's own prefetch
}  // namespace

BatchSource::BatchSource(loader::Loader& loader, const text::Tokenizer& tok, int max_len, torch::Device device,
                         bool background)
    : loader_(loader), tok_(tok), max_len_(max_len), device_(device), background_(background) {}

BatchSource::~BatchSource() { stop(); }

void BatchSource::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  ready_.clear();
}

void BatchSource::start(uint64_t epoch, size_t first_batch, size_t num_batches) {
  stop();
  loader_.start_epoch(epoch, first_batch * loader_.options().batch_size);
  stop_ = done_ = false;
  error_ = nullptr;
  remaining_ = num_batches;
  if (!background_) return;
  thread_ = std::thread([this] { produce(); });
}

void BatchSource::produce() {
  try {
    while (true) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || ready_.size() < kReadyAhead; });
        if (stop_ || remaining_ == 0) break;
      }
      loader::BatchPtr b = loader_.next();
      if (!b) break;
      ModelBatch m = to_model_batch(std::move(b), tok_, max_len_, device_);
      std::lock_guard<std::mutex> lk(mu_);
      ready_.push_back(std::move(m));
      --remaining_;
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lk(mu_);
    error_ = std::current_exception();
  }
  std::lock_guard<std::mutex> lk(mu_);
  done_ = true;
  cv_.notify_all();
}

std::optional<ModelBatch> BatchSource::next(double* wait_s) {
  const auto t0 = Clock::now();
  if (!background_) {
    std::optional<ModelBatch> out;
    if (remaining_ > 0) {
      loader::BatchPtr b = loader_.next();
      if (b) {
        out = to_model_batch(std::move(b), tok_, max_len_, device_);
        --remaining_;
      }
    }
    *wait_s = since(t0);
    return out;
  }
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return !ready_.empty() || done_; });
  *wait_s = since(t0);
  if (!ready_.empty()) {
    ModelBatch m = std::move(ready_.front());
    ready_.pop_front();
    cv_.notify_all();
    return m;
  }
  if (error_) std::rethrow_exception(error_);
  return std::nullopt;
}

}  // namespace bt::feed

// The parallel loader: a Dataset + a Sampler -> batches of decoded, transformed, normalised images.
//
// Contract:
//  - num_workers threads (0 = all work in the caller's next(), like PyTorch). Workers take samples in epoch
//    order, one at a time, and write each straight into its slot of the batch buffer; next() hands batches
//    out strictly in sampler order, whichever worker finishes first. At most prefetch_batches batches are
//    in flight ahead of the consumer (back-pressure): workers block rather than run ahead.
//  - Results are a pure function of (dataset, options, epoch): byte-identical for any worker count. The
//    augmentation seed of a sample is sample_seed(seed, epoch, row).
//  - on_bad_sample=error: the first bad sample (in epoch order) makes next() throw bt::Error naming the row
//    ("<describe(row)>: <reason>") after every earlier batch has been delivered; the workers stop cleanly.
//    on_bad_sample=skip: a bad sample's slot is refilled from the rank's order at position p + k*B
//    (k = 1, 2, ... wrapping; a position already tried moves on to the next untried one, so a short order still
//    tries distinct rows), so batches stay full and the choice does not depend on timing; the sample
//    used as a replacement therefore appears twice in that epoch. Skips are counted and the first few named.
//  - The decoded cache (decoded_cache_mb > 0) holds uint8 crops keyed by image key + transform; it is turned
//    off for train (random) transforms.
//  - The destructor, or start_epoch() mid-epoch, stops the workers without waiting for the epoch: no thread
//    outlives the Loader. Batches (BatchPtr) must be destroyed before their Loader.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/defaults.h"
#include "data/bad_rows.h"
#include "data/dataset.h"
#include "loader/batch.h"
#include "loader/decoded_cache.h"
#include "loader/sample_transform.h"
#include "loader/sampler.h"
#include "loader/worker_priority.h"
#include "media/transform.h"

namespace bt::loader {

// --media_decode, with the GPU media pipeline: auto (nvJPEG's hardware decoder when present) | gpu (nvJPEG) | cpu
// (the workers' DCT-scaled decode). GpuMediaPipeline::decode_jpegs_on_device turns it into ship_device_jpegs below;
// device-decoded JPEGs are resized from full resolution (nvJPEG has no DCT scaling).
enum class MediaDecode { kAuto, kGpu, kCpu };

struct LoaderOptions {
  int num_workers = defaults::kNumWorkers;
  int prefetch_batches = defaults::kPrefetchBatches;  // batches filled ahead of the consumer, in total (not per worker)
  int batch_size = 32;
  media::TransformSpec transform;  // image_size, eval/train, jpeg_dct_scaling, max_image_pixels
  bool output_float = true;        // normalised float32 NCHW
  bool output_u8 = false;          // uint8 NHWC too (alone, with output_float off: for device normalisation)
  // Decode-only (for the GPU media pipeline): Batch::decoded gets the DCT-scaled decoded images and their crop
  // geometry (loader/decoded_batch.h) instead of pixels; output_float / output_u8 are ignored, no cache.
  bool output_decoded = false;
  // With output_decoded, encoded mode (--media_decode gpu): JPEGs a device decoder can take (loader/decode_only.h's
  // device_decodable_jpeg) are shipped compressed (DecodedSample::encoded) for nvJPEG; other images decode here.
  bool ship_device_jpegs = false;
  // Where decode-only batches are packed (DecodedBatch::packed); nullptr = std::aligned_alloc. The GPU media
  // pipeline passes page-locked memory (cudaHostAlloc) so the device copies from it asynchronously with no
  // extra host copy (keeping the BatchPtr until that copy is done). The allocator must outlive the Loader;
  // it is called on the thread calling next() (packing grows a batch's buffer) and in ~Loader.
  const HostAllocator* packed_allocator = nullptr;
  data::OnBad on_bad_sample = data::OnBad::kError;  // data/bad_rows.h: the one enum of --on_bad_sample
  size_t decoded_cache_mb = defaults::kDecodedCacheMb;
  SamplerOptions sampler = loader_sampler_defaults();  // seed, shuffle, rank/world_size, drop_last, dedupe (batch_size is set from above)
  // The dedupe keeps images unique within this many consecutive batches taken as one: a trainer's exact
  // gradient accumulation computes one loss over K batches, so they must hold the rows one batch of K x B would.
  int dedupe_batches = 1;
  TransformFactory transform_factory;  // empty = bt::media
  WorkerPriority worker_priority;      // each worker thread's nice value and CPUs (loader/worker_priority.h)
};

struct LoaderStats {
  size_t samples = 0;  // samples delivered
  size_t cache_hits = 0, cache_misses = 0;
  size_t skipped = 0;                     // bad samples replaced (skip policy)
  // Encoded mode (ship_device_jpegs): delivered samples the device decoder cannot take (device_decodable_jpeg:
  // PNG, WebP, GIF, BMP, TIFF, progressive/CMYK/grey JPEGs), decoded by the workers instead. The run reports it.
  size_t cpu_decoded = 0;
  // Delivered samples whose decoder warned and decoded anyway (a JPEG's "Corrupt JPEG data: ..."; media/decode.h),
  // as Pillow decodes them: decodes, so an image the decoded cache then serves counts once. The run reports it.
  size_t decoded_with_warnings = 0;
  std::vector<std::string> first_skipped;  // up to kMaxNamedSkips one-line reasons
  static constexpr size_t kMaxNamedSkips = 5;
  double cache_hit_rate() const {
    size_t n = cache_hits + cache_misses;
    return n ? static_cast<double>(cache_hits) / static_cast<double>(n) : 0.0;
  }
};

// Dense per-row image ids from Dataset::image_key (rows sharing a key share an id), for dedupe.
std::vector<uint32_t> image_ids_of(const data::Dataset& ds);

class Loader {
 public:
  Loader(std::shared_ptr<const data::Dataset> dataset, LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Starts (or restarts) producing `epoch` from position start_sample of this rank's order; resuming at
  // (epoch, k * batch_size) yields exactly the batches an uninterrupted run had from step k on.
  void start_epoch(uint64_t epoch, size_t start_sample = 0);
  // The next batch in order, or nullptr at the end of the epoch. Throws bt::Error for a bad sample
  // (on_bad_sample=error) or a failure of the machinery.
  BatchPtr next();

  size_t batches_per_epoch() const;  // from position 0
  const Sampler& sampler() const { return sampler_; }
  const LoaderOptions& options() const { return opt_; }
  LoaderStats stats() const;
  const DecodedCache* cache() const { return cache_.get(); }

 private:
  struct Slot;
  struct Worker;
  struct SampleResult {
    BatchTiming timing;
    size_t hits = 0, skipped = 0, warned = 0;
    std::string error;  // non-empty: a bad sample that is not skipped
    std::exception_ptr fatal;
  };
  void worker_main(Worker& w);
  void stop_workers();
  SampleResult fill_sample(Worker& w, Batch& b, size_t pos, size_t j);
  bool try_sample(Worker& w, size_t pos, size_t row, uint8_t* u8, float* f32, SampleResult& r,
                  std::string* error, Batch* decoded_into = nullptr, size_t j = 0);
  void open_batch(Slot& s, size_t k);
  void merge(Slot& s, size_t pos, SampleResult& r);
  void record_skip(const std::string& what);
  BatchPtr produce_inline();
  BatchPtr finish(Slot& s, std::chrono::steady_clock::time_point t0);

  std::shared_ptr<const data::Dataset> ds_;
  LoaderOptions opt_;
  Sampler sampler_;
  std::unique_ptr<DecodedCache> cache_;
  std::vector<uint32_t> cache_image_ids_;  // per row, with the cache only (for its admission)
  CacheAdmission cache_admission_;
  std::unique_ptr<BatchPool> pool_;
  std::string cache_suffix_;  // transform parameters appended to the image key

  // Epoch plan (written by start_epoch while no worker runs).
  uint64_t epoch_ = 0;
  std::vector<size_t> rows_;
  size_t start_ = 0;
  size_t num_batches_ = 0;
  bool started_ = false;
  std::string failed_;  // set once a batch failed: next() keeps throwing it

  // Shared state, guarded by mu_.
  mutable std::mutex mu_;
  std::condition_variable work_cv_, ready_cv_;
  bool stop_ = false;
  size_t next_ticket_ = 0;  // next sample (batch-major) for a worker to take
  size_t limit_batch_ = 0;  // no tickets from this batch on (end of epoch, or a failed batch)
  size_t deliver_ = 0;      // next batch next() returns
  std::vector<std::unique_ptr<Slot>> slots_;  // ring of in-flight batches, indexed k % size
  LoaderStats stats_;

  std::unique_ptr<Worker> inline_worker_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
};

}  // namespace bt::loader

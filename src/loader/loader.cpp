#include "loader/loader.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "common/error.h"

namespace bt::loader {

// Owns every Batch a loader ever made; hands free ones out and takes them back from BatchPtr. Its own
// mutex is only ever taken innermost, so returning a batch from any thread cannot deadlock.
class BatchPool {
 public:
  explicit BatchPool(const HostAllocator* packed_allocator) : packed_allocator_(packed_allocator) {}
  Batch* acquire() {
    std::lock_guard lock(mu_);
    if (free_.empty()) {
      owned_.push_back(std::make_unique<Batch>());
      owned_.back()->decoded.packed.set_allocator(packed_allocator_);  // before its first growth
      return owned_.back().get();
    }
    Batch* b = free_.back();
    free_.pop_back();
    return b;
  }
  void release(Batch* b) {
    std::lock_guard lock(mu_);
    free_.push_back(b);
  }

 private:
  const HostAllocator* packed_allocator_;  // LoaderOptions::packed_allocator
  std::mutex mu_;
  std::vector<std::unique_ptr<Batch>> owned_;
  std::vector<Batch*> free_;
};

void BatchRecycler::operator()(Batch* b) const {
  if (b && pool) pool->release(b);
}

namespace {
constexpr size_t kNone = SIZE_MAX;
constexpr int kMaxReplacementTries = 64;
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

// One in-flight batch: filled by any number of workers, complete when done == size.
struct Loader::Slot {
  bool open = false;
  size_t k = 0;
  Batch* batch = nullptr;
  size_t size = 0, done = 0, in_progress = 0;
  size_t error_pos = kNone;  // lowest failing position in this batch
  std::string error;
  std::exception_ptr fatal;
};

struct Loader::Worker {
  std::unique_ptr<SampleTransform> tf;
  std::vector<uint8_t> bytes;
  AlignedBuffer<uint8_t> u8;  // the crop when the batch keeps no uint8 copy
  std::string key;
};

std::vector<uint32_t> image_ids_of(const data::Dataset& ds) {
  std::unordered_map<std::string_view, uint32_t> ids;
  std::vector<uint32_t> out(ds.size());
  for (size_t i = 0; i < ds.size(); ++i) {
    auto [it, inserted] = ids.emplace(ds.image_key(i), static_cast<uint32_t>(ids.size()));
    out[i] = it->second;
  }
  return out;
}

static SamplerOptions sampler_options(const LoaderOptions& o) {
  SamplerOptions s = o.sampler;
  s.batch_size = static_cast<size_t>(std::max(o.batch_size, 1)) * static_cast<size_t>(std::max(o.dedupe_batches, 1));
  return s;
}

Loader::Loader(std::shared_ptr<const data::Dataset> dataset, LoaderOptions options)
    : ds_(std::move(dataset)),
      opt_(std::move(options)),
      sampler_(ds_ ? ds_->size() : 0, sampler_options(opt_),
               ds_ && opt_.sampler.dedupe_images_in_batch && opt_.sampler.shuffle ? image_ids_of(*ds_) : std::vector<uint32_t>{}),
      pool_(std::make_unique<BatchPool>(opt_.packed_allocator)) {
  if (!ds_) fail("loader: no dataset");
  if (opt_.num_workers < 0) fail("--dataloader_num_workers must be >= 0 (got ", opt_.num_workers, ")");
  if (opt_.prefetch_batches < 1) fail("--prefetch_batches must be >= 1 (got ", opt_.prefetch_batches, ")");
  if (opt_.batch_size < 1) fail("--batch must be >= 1 (got ", opt_.batch_size, ")");
  if (opt_.transform.image_size < 1) fail("--image_size must be >= 1 (got ", opt_.transform.image_size, ")");
  for (int c = 0; c < 3; ++c)  // a zero std would fill the batches with inf
    if (!(opt_.transform.std[c] > 0) || !std::isfinite(opt_.transform.mean[c]) || !std::isfinite(opt_.transform.std[c]))
      fail("loader: image std[", c, "] must be a finite value > 0 and mean[", c, "] finite (got mean ",
           opt_.transform.mean[c], ", std ", opt_.transform.std[c], ")");
  if (opt_.output_decoded) opt_.output_float = opt_.output_u8 = false, opt_.decoded_cache_mb = 0;
  if (!opt_.output_float && !opt_.output_u8 && !opt_.output_decoded)
    fail("loader: neither float nor uint8 nor decoded output requested");
  if (!opt_.transform_factory) opt_.transform_factory = make_media_transform;
  if (opt_.decoded_cache_mb > 0 && opt_.transform.mode == media::TransformMode::kEval) {
    cache_ = std::make_unique<DecodedCache>(opt_.decoded_cache_mb << 20);
    cache_image_ids_ = image_ids_of(*ds_);
    const auto& t = opt_.transform;
    cache_suffix_ = str("|", t.image_size, "|", t.dct_scaling ? "dct" : "full", "|", t.max_image_pixels);
  }
  slots_.resize(static_cast<size_t>(opt_.prefetch_batches));
  for (auto& s : slots_) s = std::make_unique<Slot>();
  inline_worker_ = std::make_unique<Worker>();
  inline_worker_->tf = opt_.transform_factory();
}

Loader::~Loader() {
  stop_workers();
  for (auto& s : slots_)
    if (s->batch) pool_->release(s->batch);
}

size_t Loader::batches_per_epoch() const {
  size_t b = static_cast<size_t>(opt_.batch_size);
  return (sampler_.rows_per_epoch() + b - 1) / b;
}

LoaderStats Loader::stats() const {
  std::lock_guard lock(mu_);
  LoaderStats s = stats_;
  if (cache_) {
    s.cache_hits = cache_->hits();
    s.cache_misses = cache_->misses();
  }
  return s;
}

void Loader::stop_workers() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  ready_cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Loader::start_epoch(uint64_t epoch, size_t start_sample) {
  stop_workers();
  std::vector<size_t> rows = sampler_.epoch_rows(epoch);
  if (start_sample > rows.size())
    fail("resume position ", start_sample, " is past the end of epoch ", epoch, " (", rows.size(), " samples)");
  const size_t B = static_cast<size_t>(opt_.batch_size);
  {
    std::lock_guard lock(mu_);
    for (auto& s : slots_) {
      if (s->batch) pool_->release(s->batch);
      *s = Slot{};
    }
    epoch_ = epoch;
    rows_ = std::move(rows);
    start_ = start_sample;
    if (cache_) cache_admission_.start_pass(rows_, start_, cache_image_ids_);
    num_batches_ = (rows_.size() - start_ + B - 1) / B;
    next_ticket_ = start_;
    limit_batch_ = num_batches_;
    deliver_ = 0;
    stop_ = false;
    started_ = true;
    failed_.clear();
  }
  if (opt_.num_workers == 0) return;
  if (workers_.empty()) {
    for (int i = 0; i < opt_.num_workers; ++i) {
      workers_.push_back(std::make_unique<Worker>());
      workers_.back()->tf = opt_.transform_factory();
    }
  }
  for (auto& w : workers_)  // each at the priority asked for first (loader/worker_priority.h; never fails it)
    threads_.emplace_back([this, wp = w.get()] { apply_worker_priority(opt_.worker_priority, opt_.num_workers);
                                                 worker_main(*wp); });
}

void Loader::open_batch(Slot& s, size_t k) {
  const size_t B = static_cast<size_t>(opt_.batch_size);
  const size_t first = start_ + k * B;
  s = Slot{};
  s.open = true;
  s.k = k;
  s.size = std::min(B, rows_.size() - first);
  Batch& b = *(s.batch = pool_->acquire());
  b.epoch = epoch_;
  b.index = first / B;
  b.first_sample = first;
  b.size = static_cast<int>(s.size);
  b.image_size = opt_.transform.image_size;
  const size_t px = static_cast<size_t>(b.image_size) * static_cast<size_t>(b.image_size) * 3;
  if (opt_.output_float) b.pixels.resize(s.size * px);
  else b.pixels.clear();
  if (opt_.output_u8) b.pixels_u8.resize(s.size * px);
  else b.pixels_u8.clear();
  b.decoded.samples.assign(opt_.output_decoded ? s.size : 0, DecodedSample{});
  if (opt_.output_decoded && b.decoded.staging.size() < s.size) b.decoded.staging.resize(s.size);
  b.decoded.bytes = 0;
  b.captions.resize(s.size);
  b.image_keys.resize(s.size);
  b.rows.resize(s.size);
  b.timing = BatchTiming{};
  b.cache_hits = 0;
  b.skipped = 0;
  b.decoded_with_warnings = 0;
}

bool Loader::try_sample(Worker& w, size_t pos, size_t row, uint8_t* u8, float* f32, SampleResult& r,
                        std::string* error, Batch* decoded_into, size_t j) {
  BatchTiming& t = r.timing;
  const int S = opt_.transform.image_size;
  const size_t px = static_cast<size_t>(S) * static_cast<size_t>(S) * 3;
  if (ds_->is_bad(row)) {  // a row its source kept flagged (e.g. a caption line that is not JSON)
    *error = ds_->bad_reason(row);
    return false;
  }
  const std::string& image_key = ds_->image_key(row);
  const bool cached = cache_ && !image_key.empty();
  if (cached) {
    w.key.assign(image_key).append(cache_suffix_);
    auto t0 = Clock::now();
    if (cache_->get(w.key, u8, px)) {
      ++r.hits;
      if (f32) w.tf->normalize(u8, opt_.transform, f32);
      t.normalize_s += since(t0);
      return true;
    }
  }
  auto t0 = Clock::now();
  try {
    ds_->read_image(row, w.bytes);
  } catch (const Error& e) {
    *error = e.what();  // the dataset already names the file
    return false;
  }
  t.read_s += since(t0);
  try {
    media::TransformTiming tt;
    const uint64_t seed = sample_seed(opt_.sampler.seed, epoch_, row);
    if (decoded_into) {
      w.tf->decode_only(w.bytes, opt_.transform, seed, opt_.ship_device_jpegs, decoded_into->decoded.samples[j],
                        decoded_into->decoded.staging[j], &tt);
      t.decode_s += tt.decode_s;
      t.transform_s += tt.transform_s;
      r.warned += tt.decoded_with_warnings;
      return true;
    }
    w.tf->to_u8(w.bytes, opt_.transform, seed, u8, &tt);
    t.decode_s += tt.decode_s;
    t.transform_s += tt.transform_s;
    r.warned += tt.decoded_with_warnings;
  } catch (const Error& e) {
    *error = str(ds_->describe(row), ": ", e.what());
    return false;
  }
  auto t1 = Clock::now();
  if (cached && cache_admission_.admit(pos, row)) cache_->put(w.key, u8, px);
  if (f32) w.tf->normalize(u8, opt_.transform, f32);
  t.normalize_s += since(t1);
  return true;
}

void Loader::record_skip(const std::string& what) {
  std::lock_guard lock(mu_);
  ++stats_.skipped;
  if (stats_.first_skipped.size() < LoaderStats::kMaxNamedSkips) stats_.first_skipped.push_back(what);
}

Loader::SampleResult Loader::fill_sample(Worker& w, Batch& b, size_t pos, size_t j) {
  SampleResult r;
  const size_t S = static_cast<size_t>(opt_.transform.image_size);
  const size_t px = S * S * 3;
  if (!opt_.output_decoded) w.u8.resize(px);
  Batch* dec = opt_.output_decoded ? &b : nullptr;
  uint8_t* u8 = opt_.output_u8 ? b.pixels_u8.data() + j * px : w.u8.data();
  float* f32 = opt_.output_float ? b.pixels.data() + j * px : nullptr;
  auto use = [&](size_t row) {
    b.rows[j] = row;
    b.captions[j].assign(ds_->caption(row));
    b.image_keys[j].assign(ds_->image_key(row));
  };
  std::string err;
  size_t row = rows_[pos];
  if (try_sample(w, pos, row, u8, f32, r, &err, dec, j)) {
    use(row);
    return r;
  }
  if (opt_.on_bad_sample == data::OnBad::kError) {
    r.error = std::move(err);
    return r;
  }
  record_skip(err);
  r.skipped = 1;
  const size_t n = rows_.size(), B = static_cast<size_t>(opt_.batch_size);
  // Candidates p + a*B wrap onto positions already tried when the order is short (n = B tries p itself again and
  // again, n = 2B alternates): a position already tried moves on to the next untried one, still timing-free.
  std::vector<size_t> tried = {pos};
  for (int a = 1; a <= kMaxReplacementTries && tried.size() < n; ++a) {
    size_t q = (pos + static_cast<size_t>(a) * B) % n;
    while (std::find(tried.begin(), tried.end(), q) != tried.end()) q = (q + 1) % n;
    tried.push_back(q);
    row = rows_[q];
    std::string ignored;  // a bad candidate is reported in its own slot
    if (try_sample(w, pos, row, u8, f32, r, &ignored, dec, j)) {
      use(row);
      return r;
    }
  }
  r.error = str(err, " (on_bad_sample=skip: the next ", kMaxReplacementTries,
                " replacement candidates were bad too)");
  return r;
}

void Loader::merge(Slot& s, size_t pos, SampleResult& r) {
  Batch& b = *s.batch;
  b.timing.read_s += r.timing.read_s;
  b.timing.decode_s += r.timing.decode_s;
  b.timing.transform_s += r.timing.transform_s;
  b.timing.normalize_s += r.timing.normalize_s;
  b.cache_hits += r.hits;
  b.skipped += r.skipped;
  b.decoded_with_warnings += r.warned;
  ++s.done;
  if ((!r.error.empty() || r.fatal) && pos < s.error_pos) {
    s.error_pos = pos;
    s.error = std::move(r.error);
    s.fatal = r.fatal;
    limit_batch_ = std::min(limit_batch_, s.k);  // nothing after this batch will be delivered
  }
}

void Loader::worker_main(Worker& w) {
  const size_t B = static_cast<size_t>(opt_.batch_size), P = slots_.size();
  std::unique_lock lock(mu_);
  for (;;) {
    size_t p = 0, k = 0;
    for (;;) {
      if (stop_ || next_ticket_ >= rows_.size()) return;
      k = (next_ticket_ - start_) / B;
      if (k >= limit_batch_) return;
      if (k < deliver_ + P) break;  // back-pressure: stay within prefetch_batches of the consumer
      work_cv_.wait(lock);
    }
    p = next_ticket_++;
    Slot& s = *slots_[k % P];
    SampleResult r;
    try {
      if ((p - start_) % B == 0) open_batch(s, k);  // tickets are taken in order: the first one opens
      ++s.in_progress;
      lock.unlock();
      try {
        r = fill_sample(w, *s.batch, p, (p - start_) % B);
      } catch (...) {
        r.fatal = std::current_exception();
      }
      lock.lock();
      --s.in_progress;
    } catch (...) {  // open_batch ran out of memory: fail this batch
      if (!lock.owns_lock()) lock.lock();
      r.fatal = std::current_exception();
    }
    if (s.batch) merge(s, p, r);
    else {
      s.open = true, s.k = k, s.error_pos = p, s.fatal = r.fatal;
      limit_batch_ = std::min(limit_batch_, k);
    }
    if (s.done == s.size || s.error_pos != kNone) ready_cv_.notify_all();
  }
}

BatchPtr Loader::produce_inline() {
  auto t0 = Clock::now();
  Slot& s = *slots_[0];
  size_t k = deliver_;
  open_batch(s, k);
  const size_t first = start_ + k * static_cast<size_t>(opt_.batch_size);
  for (size_t j = 0; j < s.size && s.error_pos == kNone; ++j) {
    SampleResult r = fill_sample(*inline_worker_, *s.batch, first + j, j);
    merge(s, first + j, r);
  }
  return finish(s, t0);
}

// Hands slot s's batch to the consumer, or throws its error (then the loader stays failed).
BatchPtr Loader::finish(Slot& s, Clock::time_point t0) {
  std::unique_lock lock(mu_);
  Batch* b = s.batch;
  s.batch = nullptr;
  s.open = false;
  if (s.error_pos != kNone) {
    std::exception_ptr fatal = s.fatal;
    failed_ = s.error.empty() ? std::string("loader worker failed") : s.error;
    if (b) pool_->release(b);
    lock.unlock();
    stop_workers();
    if (fatal) std::rethrow_exception(fatal);
    throw Error(failed_);
  }
  ++deliver_;
  stats_.samples += s.size;
  stats_.decoded_with_warnings += b->decoded_with_warnings;  // at delivery too: the same for any worker count
  if (opt_.output_decoded && opt_.ship_device_jpegs)  // counted at delivery: the same for any worker count
    for (size_t j = 0; j < s.size && j < b->decoded.samples.size(); ++j)
      stats_.cpu_decoded += !b->decoded.samples[j].encoded;
  lock.unlock();
  work_cv_.notify_all();
  if (opt_.output_decoded) {  // the consumer packs: workers fill samples concurrently, sizes known only now
    auto tp = Clock::now();
    BatchPtr owner(b, BatchRecycler{pool_.get()});
    pack_decoded(b->decoded);
    b->timing.normalize_s += since(tp);
    b = owner.release();
  }
  b->timing.wait_s = since(t0);
  return BatchPtr(b, BatchRecycler{pool_.get()});
}

BatchPtr Loader::next() {
  if (!started_) start_epoch(0);
  if (!failed_.empty()) throw Error(failed_);
  if (deliver_ >= num_batches_) return nullptr;
  if (opt_.num_workers == 0) return produce_inline();
  auto t0 = Clock::now();
  Slot* s = nullptr;
  {
    std::unique_lock lock(mu_);
    s = slots_[deliver_ % slots_.size()].get();
    ready_cv_.wait(lock, [&] {
      return stop_ || (s->open && s->k == deliver_ &&
                       (s->done == s->size || (s->error_pos != kNone && s->in_progress == 0)));
    });
    if (stop_) fail("loader: stopped while waiting for a batch");
  }
  return finish(*s, t0);
}

}  // namespace bt::loader

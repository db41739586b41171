#include "loader/stream_loader.h"

#include "common/error.h"

namespace bt::loader {

// One chunk of the stream as a Dataset of chunk_ rows, of which the last m hold samples (rows before
// base_ are empty: a short final chunk is run from position base_, so batch boundaries stay aligned).
class ChunkDataset final : public data::Dataset {
 public:
  explicit ChunkDataset(size_t rows) : samples_(rows) {}
  size_t size() const override { return samples_.size(); }
  const std::string& caption(size_t i) const override { return at(i).caption; }
  const std::string& image_key(size_t i) const override { return at(i).key; }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override {
    if (i < base_) fail("stream chunk: row ", i, " holds no sample");
    bytes.assign(at(i).image.begin(), at(i).image.end());
  }
  std::string describe(size_t i) const override { return i < base_ ? std::string("(none)") : at(i).key; }
  bool is_bad(size_t i) const override { return i < base_; }  // never chosen as a replacement
  std::string bad_reason(size_t i) const override { return "stream chunk: no sample"; }

  data::TarSample& slot(size_t k) { return samples_[k]; }
  void set_count(size_t m) { base_ = samples_.size() - m; }
  size_t base() const { return base_; }

 private:
  const data::TarSample& at(size_t i) const {
    static const data::TarSample kEmpty;
    return i < base_ ? kEmpty : samples_[i - base_];
  }
  std::vector<data::TarSample> samples_;
  size_t base_ = 0;
};

StreamLoader::StreamLoader(std::vector<std::string> shards, data::ShardOptions shard_opts,
                           LoaderOptions options, StreamOptions stream, size_t chunk_batches)
    : shards_(std::move(shards)), shard_opts_(std::move(shard_opts)), opt_(std::move(options)),
      stream_opt_(stream) {
  if (shards_.empty()) fail("no tar shards given");
  if (opt_.batch_size < 1) fail("--batch must be >= 1 (got ", opt_.batch_size, ")");
  chunk_ = std::max<size_t>(chunk_batches, 1) * static_cast<size_t>(opt_.batch_size);
  // The stream is the shuffled, sharded order already: the per-chunk loaders just read it in order.
  LoaderOptions inner = opt_;
  inner.sampler.shuffle = false;
  inner.sampler.rank = 0;
  inner.sampler.world_size = 1;
  inner.sampler.drop_last = false;
  inner.sampler.dedupe_images_in_batch = false;
  inner.decoded_cache_mb = 0;
  for (Part& p : parts_) {
    p.chunk = std::make_shared<ChunkDataset>(chunk_);
    p.loader = std::make_unique<Loader>(p.chunk, inner);
  }
  if (stream_opt_.queue_capacity < chunk_) stream_opt_.queue_capacity = chunk_;  // a chunk ready ahead
}

StreamLoader::~StreamLoader() = default;

bool StreamLoader::refill(Part& p) {
  size_t m = 0;
  p.error.clear();
  try {
    while (m < chunk_ && source_->pop(p.chunk->slot(m))) ++m;
  } catch (const Error& e) {
    p.error = e.what();
  }
  p.busy = m > 0 || !p.error.empty();
  if (m == 0) return p.busy;
  p.chunk->set_count(m);
  p.first = next_pos_;
  next_pos_ += m;
  const size_t base = p.chunk->base();
  p.loader->set_row_offset(p.first - base);  // seeds follow the sequence position, not the chunk row
  p.loader->start_epoch(epoch_, base);
  return true;
}

void StreamLoader::start_epoch(uint64_t epoch, size_t start_sample) {
  for (Part& p : parts_) {
    p.loader->start_epoch(epoch, p.chunk->size());  // stops its workers; nothing left to do
    p.busy = false;
  }
  if (source_) stream_bad_.merge(source_->bad());
  source_.reset();
  epoch_ = epoch;
  next_pos_ = start_sample;
  StreamOptions so = stream_opt_;
  so.skip = start_sample;
  source_ = std::make_unique<StreamSource>(shards_, shard_opts_, opt_.sampler, epoch, so);
  started_ = true;
  cur_ = 0;
  if (refill(parts_[0]) && parts_[0].error.empty()) refill(parts_[1]);
}

BatchPtr StreamLoader::next() {
  if (!started_) start_epoch(0);
  const size_t B = static_cast<size_t>(opt_.batch_size);
  for (;;) {
    Part& p = parts_[cur_];
    if (!p.busy) return nullptr;
    BatchPtr b = p.chunk->base() < p.chunk->size() ? p.loader->next() : nullptr;
    if (b) {
      const size_t base = p.chunk->base();
      for (size_t& r : b->rows) r = p.first + (r - base);
      b->first_sample = p.first + (b->first_sample - base);
      b->index = b->first_sample / B;
      b->epoch = epoch_;
      return b;
    }
    if (!p.error.empty()) {
      std::string e = p.error;
      p.busy = false;
      throw Error(e);
    }
    p.busy = false;
    Part& other = parts_[cur_ ^ 1];
    if (other.busy && other.error.empty()) refill(p);  // keep one chunk decoding ahead
    cur_ ^= 1;
  }
}

LoaderStats StreamLoader::stats() const {
  LoaderStats s;
  for (const Part& p : parts_) {
    LoaderStats t = p.loader->stats();
    s.samples += t.samples;
    s.skipped += t.skipped;
    for (auto& f : t.first_skipped)
      if (s.first_skipped.size() < LoaderStats::kMaxNamedSkips) s.first_skipped.push_back(f);
  }
  data::BadRows bad = stream_bad_;
  if (source_) bad.merge(source_->bad());
  s.skipped += bad.count;
  for (auto& f : bad.first)
    if (s.first_skipped.size() < LoaderStats::kMaxNamedSkips) s.first_skipped.push_back(f);
  return s;
}

}  // namespace bt::loader

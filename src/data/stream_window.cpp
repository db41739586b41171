// A sliding window over StreamOrder's sequence, as a Dataset (see stream_window.h).
#include "data/stream_window.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string_view>

#include "common/error.h"

namespace bt::data {

namespace {
const std::string kEmpty;
}  // namespace

StreamWindowDataset::StreamWindowDataset(std::vector<std::string> shards, ShardOptions shard_opts,
                                         StreamOrderOptions order, std::optional<StreamCursor> cursor,
                                         StreamWindowOptions opts)
    : shards_(std::move(shards)),
      shard_opts_(std::move(shard_opts)),
      order_opts_(order),
      cursor_(std::move(cursor)),
      opts_(opts) {
  if (opts_.window < 1 || opts_.boundary < 1) fail("streamed shards: the window and boundary must be >= 1");
  if (opts_.start > opts_.length)
    fail("streamed shards: resume position ", opts_.start, " is past the run's ", opts_.length, " samples");
  low_ = opts_.start;
  if (cursor_ && cursor_->samples != opts_.start)
    fail("the streamed-shard position in the checkpoint is at sample ", cursor_->samples, ", not at ", opts_.start,
         " where the run resumes (resume with the same batch size and ranks)");
}

StreamWindowDataset::~StreamWindowDataset() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StreamWindowDataset::start_locked() const {
  if (started_) return;
  started_ = true;
  thread_ = std::thread([self = const_cast<StreamWindowDataset*>(this)] { self->produce(); });
}

void StreamWindowDataset::produce() {
  try {
    StreamOrder order(shards_, shard_opts_, order_opts_, cursor_.value_or(StreamCursor{}));
    TarSample t;
    // The cursor before `row` (taken with the row before it, so it is there as soon as that row can be read).
    auto keep = [&](size_t row) {
      if (row < opts_.start || row % opts_.boundary != 0) return;
      cursors_.emplace_back(row, order.cursor());
      if (cursors_.size() > kKeptCursors) cursors_.pop_front();
    };
    size_t row = cursor_ ? opts_.start : 0;
    {
      std::lock_guard lock(mu_);
      keep(row);
    }
    for (; row < opts_.length; ++row) {
      {
        std::unique_lock lock(mu_);  // hold at most `window` rows: wait for the consumer to release the oldest
        cv_.wait(lock, [&] { return stop_ || row < low_ + opts_.window; });
        if (stop_) return;
      }
      order.next(t);
      std::lock_guard lock(mu_);
      epoch_ = order.cursor().epoch;
      keep(row + 1);  // the end too: a run's last checkpoint
      if (row >= low_) {  // rows below low_ (a replay, or released before they were read) are dropped
        rows_.push_back({std::move(t.key), std::move(t.caption), std::move(t.image)});
        held_max_ = std::max(held_max_, rows_.size());
      }
      cv_.notify_all();
    }
    std::lock_guard lock(mu_);
    bad_ = order.bad();
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    error_ = e.what();
    cv_.notify_all();
  }
}

const StreamWindowDataset::Row* StreamWindowDataset::held(size_t i) const {
  if (i < low_ || i - low_ >= rows_.size()) return nullptr;
  return &rows_[i - low_];
}

const std::string& StreamWindowDataset::caption(size_t i) const {
  std::lock_guard lock(mu_);
  const Row* r = held(i);
  return r ? r->caption : kEmpty;
}

const std::string& StreamWindowDataset::image_key(size_t i) const {
  std::lock_guard lock(mu_);
  const Row* r = held(i);
  return r ? r->key : kEmpty;
}

std::string StreamWindowDataset::describe(size_t i) const {
  std::lock_guard lock(mu_);
  const Row* r = held(i);
  return r ? r->key : str("streamed sample ", i);
}

void StreamWindowDataset::read_image(size_t i, std::vector<uint8_t>& bytes) const {
  std::unique_lock lock(mu_);
  start_locked();
  if (i >= opts_.length) fail("streamed sample ", i, " is past the run's ", opts_.length, " samples");
  if (i < low_) fail("streamed sample ", i, " was already released (the window holds samples from ", low_, " on)");
  if (i >= low_ + opts_.window)
    fail("streamed sample ", i, " is beyond the window of ", opts_.window, " samples from ", low_);
  cv_.wait(lock, [&] { return stop_ || !error_.empty() || i < low_ || held(i) != nullptr; });
  if (const Row* r = held(i)) {
    bytes = r->image;
    return;
  }
  if (!error_.empty()) throw Error(error_);
  fail("streamed sample ", i, " was released while waiting for it");
}

void StreamWindowDataset::release_before(size_t row) {
  {
    std::lock_guard lock(mu_);
    start_locked();
    if (row <= low_) return;
    const size_t drop = std::min(row - low_, rows_.size());
    rows_.erase(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(drop));
    low_ = row;
  }
  cv_.notify_all();
}

std::string StreamWindowDataset::cursor_at(size_t row) const {
  std::lock_guard lock(mu_);
  for (const auto& [r, cursor] : cursors_)
    if (r == row) return cursor.to_json();
  fail("streamed shards: no position kept for sample ", row, " (kept: ", cursors_.size(), " batch boundaries)");
}

size_t StreamWindowDataset::held_max() const {
  std::lock_guard lock(mu_);
  return held_max_;
}

uint64_t StreamWindowDataset::epoch() const {
  std::lock_guard lock(mu_);
  return epoch_;
}

uint64_t StreamWindowDataset::epoch_before(size_t row) const {
  std::lock_guard lock(mu_);
  for (const auto& [r, cursor] : cursors_)
    if (r == row) return cursor.epoch;  // a cursor after sample i is in sample i's epoch
  return epoch_;
}

BadRows StreamWindowDataset::bad() const {
  std::lock_guard lock(mu_);
  return bad_;
}

std::string StreamWindowDataset::identity() const {
  // FNV-1a over each shard's file name (the text after its last '/' or space: a moved folder or bucket is the same
  // data), but a pipe: command whole: every `aws s3 cp s3://B/K -` ends in "-", so by name any two would match.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto& s : shards_) {
    std::string_view id = s;
    const size_t cut = s.find_last_of("/ ");
    if (s.rfind("pipe:", 0) != 0 && cut != std::string::npos) id.remove_prefix(cut + 1);
    for (unsigned char c : id) h = (h ^ c) * 0x100000001b3ULL;
    h = (h ^ '\n') * 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return str("streamed: ", shards_.size(), " shards, names ", hex);
}

std::vector<std::string> StreamWindowDataset::first_captions(size_t max) const {
  StreamOrderOptions order = order_opts_;
  order.rank = 0, order.world_size = 1;
  StreamOrder o(shards_, shard_opts_, order);
  std::vector<std::string> out;
  TarSample t;
  while (out.size() < max && o.next(t) && o.cursor().epoch == 0) out.push_back(std::move(t.caption));
  return out;
}

}  // namespace bt::data

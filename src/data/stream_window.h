// Streamed shards for training in bounded memory (issue 45): StreamOrder's endless sample sequence
// (data/stream_order.h) seen through a sliding window as a Dataset, so the loader (loader/loader.h) reads it
// unchanged with the identity order: row p is the p-th sample of the sequence.
//
// Contract:
//  - size() = opts.length (the run's samples: --max_steps x the global batch / ranks). Rows below opts.start
//    (a resumed run's position) are never served.
//  - A producer thread reads the sequence ahead of the consumer; at most opts.window samples are held (rows
//    [low, low + window)). release_before(p) frees the rows below p (the trainer calls it as steps consume
//    their batches); held_max() is the most rows ever held at once, <= window.
//  - read_image(p) waits until row p is read. A row already freed or beyond low + window throws bt::Error naming
//    it (the loader counts it as a bad candidate: with --on_bad_sample skip a decode failure is replaced from the
//    window, one or two batches on; further replacements depend on timing and are not guaranteed).
//  - caption()/image_key()/describe() of a row not held give "" (cheap, never block): call them after read_image.
//  - A stream that fails for good (404, a shard broken under on_bad = kError) fails every later read_image with
//    its one-line message (the URL/command and why).
//  - cursor_at(p): StreamOrder's cursor before row p as JSON, for p a multiple of opts.boundary among the last
//    kKeptCursors boundaries read; a resume passes it back (start = p) and continues the exact sequence. Without
//    one (several ranks, an old checkpoint) the rows below start are read again and dropped: also exact.
//  - Memory: the window's samples (encoded bytes), K open shard readers, kKeptCursors small cursors.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "data/dataset.h"
#include "data/stream_order.h"

namespace bt::data {

struct StreamWindowOptions {
  size_t length = 0;    // rows (Dataset::size())
  size_t start = 0;     // the first row read
  size_t window = 64;   // most rows held
  size_t boundary = 1;  // cursors are kept at rows that are multiples of this (the batch size)
};

class StreamWindowDataset : public Dataset {
 public:
  static constexpr size_t kKeptCursors = 1024;

  // `cursor`: StreamOrder's cursor at opts.start (from cursor_at), or nullopt to read the rows below start again.
  StreamWindowDataset(std::vector<std::string> shards, ShardOptions shard_opts, StreamOrderOptions order,
                      std::optional<StreamCursor> cursor, StreamWindowOptions opts);
  ~StreamWindowDataset() override;

  size_t size() const override { return opts_.length; }
  const std::string& caption(size_t i) const override;
  const std::string& image_key(size_t i) const override;
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override;
  std::string describe(size_t i) const override;

  void release_before(size_t row);
  std::string cursor_at(size_t row) const;  // throws bt::Error when not kept
  size_t held_max() const;
  uint64_t epoch() const;  // StreamOrder's epoch of the last row read (ahead of the consumer)
  // The epoch of row - 1, the last sample before a kept boundary `row` (else epoch()): what a step trained on.
  uint64_t epoch_before(size_t row) const;
  BadRows bad() const;
  // "streamed: N shards, names <hash>": what a checkpoint records as the data: a hash of the shards' file names in
  // order (not their folders or hosts), a pipe: command's whole text.
  std::string identity() const;

  // The captions of the first `max` samples of the sequence as rank 0 of 1 reads it (so every rank gets the same),
  // at most one epoch, read by a StreamOrder of their own: what a tokenizer is trained on when none is given.
  std::vector<std::string> first_captions(size_t max) const;

 private:
  struct Row {
    std::string key, caption;
    std::vector<uint8_t> image;
  };
  void produce();
  void start_locked() const;
  const Row* held(size_t i) const;  // mu_ held

  std::vector<std::string> shards_;
  ShardOptions shard_opts_;
  StreamOrderOptions order_opts_;
  std::optional<StreamCursor> cursor_;
  StreamWindowOptions opts_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable std::thread thread_;  // started by the first read (a setup that never reads opens no stream)
  mutable bool started_ = false;
  bool stop_ = false;
  std::string error_;                // the producer's failure
  size_t low_ = 0;                   // rows_[0] is row low_
  std::deque<Row> rows_;             // rows [low_, low_ + rows_.size())
  std::deque<std::pair<size_t, StreamCursor>> cursors_;  // (row, the cursor before it)
  size_t held_max_ = 0;
  uint64_t epoch_ = 0;
  BadRows bad_;
};

}  // namespace bt::data

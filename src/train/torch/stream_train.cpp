// Streamed --train_shards in bounded memory (see stream_train.h).
#include "train/torch/stream_train.h"

#include <cstdio>

#include "common/error.h"
#include "data/byte_stream.h"
#include "data/stream_order.h"
#include "data/stream_window.h"
#include "report/run_log.h"
#include "train/checkpoint_dir.h"

namespace bt::train {

namespace {

constexpr int kOpenShards = 4;  // StreamOrder's K: shards read round-robin at once

size_t rows_per_step(const TrainRun& r) {
  return static_cast<size_t>(r.batch()) * static_cast<size_t>(r.o.gradient_accumulation_steps);
}

}  // namespace

std::shared_ptr<const data::Dataset> open_streamed_train(const TrainRun& r, const source::SourceOptions& so) {
  const TrainOptions& o = r.o;
  const std::string& path = r.s.train_path;
  if (r.s.demo || !o.train_mix_files.empty() || !data::is_streamed_location(path)) return nullptr;
  if (o.max_steps <= 0)
    fail(r.s.train_flag, " ", path, ": streamed shards have no known length; give --max_steps (the stream runs on "
         "through reshuffled epochs until then)");
  if (o.max_train_samples > 0)
    fail("--max_train_samples is not supported with streamed ", r.s.train_flag, " ", path, ": the stream has no "
         "rows to select; bound the run with --max_steps");
  data::ShardOptions sh;
  sh.caption_column = so.caption_column.value_or("caption");
  sh.on_bad = so.on_bad;
  sh.max_member_bytes = so.max_image_bytes;
  sh.max_caption_bytes = so.max_line_bytes;
  const size_t per_step = rows_per_step(r), B = static_cast<size_t>(r.batch());
  size_t start = 0;
  std::optional<data::StreamCursor> cursor;
  if (!r.resume_dir.empty()) {
    const nlohmann::json state = report::read_json_file(resume_state_file(r.resume_dir));
    start = static_cast<size_t>(state.value("global_step", int64_t(0))) * per_step;
    const nlohmann::json settings = state.value("settings", nlohmann::json::object());
    if (o.world_size == 1 && settings.contains("stream_cursor"))
      cursor = data::StreamCursor::from_json(settings["stream_cursor"].get<std::string>());
  }
  // The window covers the step being trained, the batches made ahead of it (the provider's and the loader's
  // prefetch) and a margin for a bad sample's replacement one batch on.
  const size_t window = (static_cast<size_t>(std::max(o.prefetch_batches, 1)) +
                         static_cast<size_t>(o.gradient_accumulation_steps) + 6) * B;
  data::StreamWindowOptions wo{static_cast<size_t>(o.max_steps) * per_step, start, window, B};
  data::StreamOrderOptions order{static_cast<uint64_t>(o.seed), o.rank, o.world_size, kOpenShards};
  auto ds = std::make_shared<data::StreamWindowDataset>(data::expand_shard_pattern(path), sh, order, cursor, wo);
  if (r.talk) {
    std::printf("streamed shards: read in bounded memory (%d shards open, at most %zu samples held); image dedupe in "
                "batch and the decoded cache are off for streamed data (they need the whole set)\n",
                kOpenShards, window);
    if (start > 0 && !cursor)
      std::printf("resuming streamed shards by reading their first %zu samples again (no saved stream position)\n",
                  start);
  }
  return ds;
}

const data::StreamWindowDataset* streamed_train(const TrainRun& r) {
  return dynamic_cast<const data::StreamWindowDataset*>(r.train_ds.get());
}

void adapt_streamed_loader(const TrainRun& r, loader::LoaderOptions& lo) {
  if (!streamed_train(r)) return;
  lo.sampler.shuffle = false;  // row p is the stream's p-th sample: StreamOrder shuffles shards and splits ranks
  lo.sampler.rank = 0;
  lo.sampler.world_size = 1;
  lo.sampler.dedupe_images_in_batch = false;
  lo.sampler.row_group_ends.clear();
  lo.sampler.mix = nullptr;
  lo.decoded_cache_mb = 0;
}

size_t streamed_plan_rows(const TrainRun& r) {
  return r.train_ds->size() * static_cast<size_t>(std::max(r.o.world_size, 1));
}

void streamed_step_done(TrainRun& r, int64_t global_step) {
  const auto* w = streamed_train(r);
  if (!w) return;
  const size_t row = static_cast<size_t>(global_step) * rows_per_step(r);
  // Several ranks: each has its own position and rank 0 saves the checkpoint; theirs resume by re-reading.
  if (r.o.world_size == 1) {
    const std::string at = w->cursor_at(row);
    r.st.settings["stream_cursor"] = at;
    // The first epoch end the stream passes tells the epoch's length: the samples before the new epoch's (those
    // its open shards gave) over the epochs completed.
    const data::StreamCursor c = data::StreamCursor::from_json(at);
    if (r.stream_epoch_samples == 0 && c.epoch > 0) {
      uint64_t in_new_epoch = 0;
      for (const auto& slot : c.slots) in_new_epoch += slot.shard >= 0 ? slot.taken : 0;
      if (c.samples > in_new_epoch) r.stream_epoch_samples = (c.samples - in_new_epoch) / c.epoch;
    }
  }
  const_cast<data::StreamWindowDataset*>(w)->release_before(row);  // made non-const by open_streamed_train
}

double log_epoch(const TrainRun& r) {
  if (const auto* w = streamed_train(r)) {
    const size_t row = static_cast<size_t>(r.st.global_step) * rows_per_step(r);
    if (r.stream_epoch_samples > 0) return static_cast<double>(row) / static_cast<double>(r.stream_epoch_samples);
    return static_cast<double>(w->epoch_before(row));  // the whole epochs passed; the fraction is not known yet
  }
  return static_cast<double>(r.st.global_step) / static_cast<double>(r.plan.steps_per_epoch);
}

}  // namespace bt::train

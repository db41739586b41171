// Training on streamed shards (--train_shards of http(s):// URLs or pipe:COMMAND, data/byte_stream.h) in bounded
// memory (issue 45): the set is read through StreamOrder's endless, per-epoch reshuffled sequence, held in a sliding
// window (data/stream_window.h) that the unchanged loader reads with the identity order, one loader epoch spanning
// the run. Evaluation and encode keep data/streamed_dataset.h (read once).
//
// Contract:
//  - open_streamed_train: nullptr unless the training data is one streamed --train_shards pattern. The length is
//    unknown, so --max_steps is required (one line otherwise; --max_train_samples is refused); the dataset holds --max_steps x accumulation x batch
//    rows for this rank; a resumed run starts at its checkpoint's step, from the saved stream position
//    ("stream_cursor" in the trainer state's settings; one rank) or by re-reading the stream up to there.
//  - adapt_streamed_loader: the order is the stream's (no shuffle, no sharding: each rank reads its own shards),
//    no image dedupe in batch and no decoded cache (they need the whole set), said once at the start.
//  - streamed_step_done: after each step the window frees the step's samples and (one rank) the stream position
//    after them goes into r.st.settings["stream_cursor"], which every checkpoint saves.
//  - log_epoch: the epoch the logs show: for streamed data the samples read over the epoch's length once the stream
//    has passed an epoch's end (one rank; r.stream_epoch_samples), the whole epochs passed before that (the logs then
//    say the length is not known yet); else global_step / steps_per_epoch.
#pragma once
#include <memory>
#include <string>

#include "train/torch/train_setup.h"

namespace bt::data {
class StreamWindowDataset;
}

namespace bt::train {

std::shared_ptr<const data::Dataset> open_streamed_train(const TrainRun& r, const source::SourceOptions& so);
const data::StreamWindowDataset* streamed_train(const TrainRun& r);  // nullptr: not streamed
void adapt_streamed_loader(const TrainRun& r, loader::LoaderOptions& lo);
// Rows of the run's one loader epoch as plan_steps counts them (all ranks).
size_t streamed_plan_rows(const TrainRun& r);
void streamed_step_done(TrainRun& r, int64_t global_step);
double log_epoch(const TrainRun& r);

}  // namespace bt::train

// Synthetic New-Yorker-like cartoon data: line drawings on off-white paper with grain, baseline JPEG q90.
// Each caption first says what the picture shows (scene, people, hats, wall items, furniture: what the
// generator drew, so a model can learn it), then a 10-25-word quip as decoration; like the real data, each
// image appears in several rows with different captions (by default images = n/4). A matching split (five
// caption choices per row, one true, label A-E, as the contest's `matching` task) is written beside it.
//
// Contract:
//  - Everything is a pure function of (options, seed): same arguments -> same bytes, for any thread count.
//  - synth_plan() is cheap (captions and row -> image assignment, no pixels); synth_jpeg() renders one image.
//  - write_synth() writes DIR/images/NNNNNN.jpg + DIR/captions.jsonl + DIR/matching.jsonl, or with tar = true
//    WebDataset shards DIR/shard-NNNNNN.tar of shard_size rows each (members ROW.jpg + ROW.txt, the image bytes
//    repeated per row).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace bt::data {

struct SynthOptions {
  size_t n = 1000;      // rows
  uint64_t seed = 0;
  size_t images = 0;    // distinct images; 0 = max(1, n / 4)
  int min_width = 800, max_width = 1700;
  double min_aspect = 0.6, max_aspect = 1.6;  // width / height
  int quality = 90;
  float grain = 4.0f;   // paper grain amplitude in levels; drives the JPEG bitrate (4 -> ~1.65 bits/px)
  int threads = 0;      // 0 = hardware concurrency
  bool tar = false;
  size_t shard_size = 1000;
  // Paint a coloured balloon (8 colours, 3 places) on each picture, and say so in its caption: a
  // feature a small model learns in minutes (the demo uses it). Off by default so benchmark data stays as it was.
  bool accents = false;
};

struct SynthPlan {
  std::vector<std::string> captions;  // per row: the picture's description, then a quip
  std::vector<uint32_t> image_of_row;
  std::vector<std::string> scene_of_image;  // per image: equal keys = descriptions state the same facts
  size_t images = 0;
};

// The contest's matching task on the synthetic rows: per row, its caption among four captions of pictures
// whose descriptions state other facts (fewer when the data has fewer such pictures), at a random position.
struct MatchingRow {
  uint32_t image = 0;
  std::vector<std::string> choices;
  int label = 0;  // index of the true caption in choices
};

SynthPlan synth_plan(const SynthOptions& opts);
std::vector<MatchingRow> synth_matching(const SynthPlan& plan, uint64_t seed);

// Renders and encodes image `index`; writes its size to *width / *height when given.
std::vector<uint8_t> synth_jpeg(const SynthOptions& opts, size_t index, int* width = nullptr, int* height = nullptr);

// A quip of 10-25 words drawn from `seed` (the decoration after each description; exposed for tests).
std::string synth_caption(uint64_t seed);

// Progress callback: (images done, images total); called from worker threads, serialised.
using SynthProgress = std::function<void(size_t, size_t)>;

// Renders all images of the plan in parallel (index order in the result).
std::vector<std::vector<uint8_t>> synth_all_jpegs(const SynthOptions& opts, size_t images,
                                                  const SynthProgress& progress = {});

// An in-memory Dataset of the generated rows (image_key = "synth:<image index>"), for tests of other modules.
std::unique_ptr<Dataset> synth_dataset(const SynthOptions& opts);

void write_synth(const std::string& dir, const SynthOptions& opts, const SynthProgress& progress = {});

}  // namespace bt::data

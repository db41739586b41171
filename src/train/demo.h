// The built-in demo: `bridgetune train --demo` (or with no flag at all, `make demo`'s) fine-tunes the tiny preset
// on generated New-Yorker-like cartoons whose captions say what each picture shows. Whether a run is the demo, and
// its recipe, are decided once, in resolve_settings (train/run_settings.h), from what is here.
//
// Its recipe replaces the defaults of the flags the user did not give: a tiny model from scratch wants a large
// learning rate and no dropout; 3 epochs (train's default) of kTrainRows rows (~560 steps, about a minute and a half
// on 2 cores) take held-out matching from chance (0.2) to ~0.8 and retrieval R@1 from chance (1/32) to ~0.5
// (docs/PERFORMANCE.md). It evaluates and checkpoints once per epoch of its own batch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "data/synth.h"

namespace bt::train::demo {

inline constexpr int kBatch = 32;
// 5e-4, not 1e-3: at 1e-3 three of four seeds (1-3) ended near chance (matching 0.31-0.36); at 5e-4 seeds 2, 3 and
// 42 reach matching 0.83-0.97 and R@1 0.50-0.72, seed 1 0.47 (docs/PERFORMANCE.md, "Four seeds").
inline constexpr double kLearningRate = 5e-4, kWarmupRatio = 0.05, kDropout = 0;
inline constexpr int64_t kLoggingSteps = 20;
// Enough distinct pictures (kTrainImages) that what the model learns carries over to the held-out ones.
inline constexpr size_t kTrainRows = 6000, kTrainImages = 2000, kValidationRows = 64, kValidationImages = 32;
// --eval_steps / --save_steps unless given: one epoch at the demo's batch (6000 / 32 = 187 steps).
inline constexpr int64_t kEpochSteps = static_cast<int64_t>(kTrainRows) / kBatch;

// Where the generated splits go inside the run's output_dir (a folder of images + captions.jsonl + matching.jsonl).
std::string train_dir(const std::filesystem::path& output_dir);
std::string validation_dir(const std::filesystem::path& output_dir);

// Generates both splits (train: kTrainRows rows of kTrainImages pictures, with a coloured balloon a small model
// learns to see within minutes; validation: held-out pictures) into output_dir; one line unless quiet.
void write_data(const std::filesystem::path& output_dir, bool quiet);

}  // namespace bt::train::demo

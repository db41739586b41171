// The loader's command-line flags, shared by `bench-loader` and `train` so both spell them the same way.
// The current values of `o` are the defaults shown in --help; callers set their own defaults first (e.g.
// train turns dedupe on, picks the train transform).
#pragma once
#include <CLI/CLI.hpp>

#include "loader/loader.h"

namespace bt::cli {

// Adds --dataloader_num_workers (unless with_workers is false: bench-loader takes a list instead),
// --prefetch_batches, --image_size, --jpeg_dct_scaling on|off, --max_image_pixels, --max_image_bytes, --on_bad_sample
// error|skip, --decoded_cache_mb, --image_column, --caption_column, --seed, --dedupe_images_in_batch,
// --loader_output f32|u8|both.
void add_loader_flags(CLI::App& app, loader::LoaderOptions& o, bool with_workers = true);

// "on"/"off" (also true/false, 1/0); throws bt::Error naming the flag otherwise.
bool parse_on_off(const std::string& value, const std::string& flag);

}  // namespace bt::cli

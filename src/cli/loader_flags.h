// bench-loader's loader flags, and train's augmentation flags (add_augment_flags). The flags bench-loader shares
// with train (--image_column, --caption_column, --on_bad_sample, --max_image_bytes, --seed, --prefetch_batches,
// --decoded_cache_mb, ...) come from the flag table (cli/flag_table.h), so both spell and describe them the same way.
// The current values of `o` are the defaults shown in --help.
#pragma once
#include <CLI/CLI.hpp>

#include "cli/enum_flag.h"
#include "loader/loader.h"
#include "media/augment.h"
#include "source/source.h"

namespace bt::cli {

// --on_bad_sample's words, for every command that reads data.
inline const EnumWords<data::OnBad> kOnBadWords = {{"error", data::OnBad::kError}, {"skip", data::OnBad::kSkip}};
inline const EnumWords<loader::MediaDecode> kMediaDecodeWords = {
    {"auto", loader::MediaDecode::kAuto}, {"gpu", loader::MediaDecode::kGpu}, {"cpu", loader::MediaDecode::kCpu}};
// bench-loader's --transform words: eval (resize + centre crop) | train (random crop + flip). train's
// --train_transform takes media/augment.h's presets instead (add_augment_flags).
inline const EnumWords<media::TransformMode> kTransformWords = {{"eval", media::TransformMode::kEval},
                                                                {"train", media::TransformMode::kTrain}};

// Adds --dataloader_num_workers (unless with_workers is false: bench-loader takes a list instead),
// --prefetch_batches, --image_size, --jpeg_dct_scaling on|off, --max_image_pixels, --decoded_cache_mb, --seed,
// --dedupe_images_in_batch, --loader_output f32|u8|both into `o`, and how the dataset is read into `read`:
// --max_image_bytes, --on_bad_sample error|skip, --image_column, --caption_column.
void add_loader_flags(CLI::App& app, loader::LoaderOptions& o, source::ReadOptions& read, bool with_workers = true);

// The train transform: `preset_flag` names a preset of media/augment.h (eval, train, finetune, strong) and
// --rrc_scale a,b, --rrc_ratio a,b, --hflip_p p and --color_jitter b,c,s override its values, whatever the order on
// the command line. Each value is checked as it is read (one line naming the flag); media::apply_augment then
// resolves the preset and refuses an override of eval. --help lists the presets from the table.
void add_augment_flags(CLI::App& app, media::AugmentOptions& a, const std::string& preset_flag = "--train_transform");

// "on"/"off" (also true/false, 1/0); throws bt::Error naming the flag otherwise.
bool parse_on_off(const std::string& value, const std::string& flag);

}  // namespace bt::cli

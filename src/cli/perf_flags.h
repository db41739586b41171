// The step-performance flags of issue 46, shared by `train` and `bench`: attention's kernel, the decode workers'
// priority, and torch's profiler around chosen steps. Their names, defaults and help are the flag table's
// (cli/flag_table.h).
#pragma once
#include <CLI/CLI.hpp>

#include "cli/enum_flag.h"
#include "cli/flag_table.h"
#include "train/trainer.h"

namespace bt::cli {

inline const EnumWords<model::AttentionOverride> kAttentionWords = {
    {"auto", model::AttentionOverride::kAuto},   {"flash", model::AttentionOverride::kFlash},
    {"efficient", model::AttentionOverride::kEfficient}, {"cudnn", model::AttentionOverride::kCudnn},
    {"math", model::AttentionOverride::kMath},   {"eager", model::AttentionOverride::kEager}};

inline void add_perf_flags(CLI::App& app, train::TrainOptions* o) {
  add_enum(app, flags::kAttentionBackend, o->attention_backend, kAttentionWords);
  add_flag(app, flags::kLoaderWorkerNice, o->loader_worker_nice)->check(CLI::Range(-1, 19));
  add_switch(app, flags::kLoaderWorkerAffinity, o->loader_worker_affinity);
  add_flag(app, flags::kProfileSteps, o->profile_steps);
}

}  // namespace bt::cli

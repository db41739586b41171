// The step-performance flags of issue 46, shared by `train` and `bench`: attention's kernel, the decode workers'
// priority, and torch's profiler around chosen steps.
#pragma once
#include <CLI/CLI.hpp>

#include "cli/enum_flag.h"
#include "train/trainer.h"

namespace bt::cli {

inline const EnumWords<model::AttentionOverride> kAttentionWords = {
    {"auto", model::AttentionOverride::kAuto},   {"flash", model::AttentionOverride::kFlash},
    {"efficient", model::AttentionOverride::kEfficient}, {"cudnn", model::AttentionOverride::kCudnn},
    {"math", model::AttentionOverride::kMath},   {"eager", model::AttentionOverride::kEager}};

inline void add_perf_flags(CLI::App& app, train::TrainOptions* o) {
  add_enum_flag(app, "--attention_backend", o->attention_backend, kAttentionWords,
                "auto|flash|efficient|cudnn|math|eager: attention's kernel (auto: the fastest that takes each tower's "
                "inputs; one these inputs rule out falls back, said in the run's op_paths)");
  app.add_option("--loader_worker_nice", o->loader_worker_nice,
                 "Nice value added to the decode workers' threads (-1: 5 when training on CUDA, 0 on the CPU)")
      ->capture_default_str()->check(CLI::Range(-1, 19));
  app.add_flag("--loader_worker_affinity", o->loader_worker_affinity,
               "Keep the decode workers off the first CPU (for the thread launching the GPU's work)");
  app.add_option("--profile_steps", o->profile_steps,
                 "A:B: torch's profiler around steps A to B, a chrome trace in output_dir/profile_steps_A-B.json");
}

}  // namespace bt::cli

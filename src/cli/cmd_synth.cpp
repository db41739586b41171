// `bridgetune synth`: writes a synthetic New-Yorker-like cartoon dataset (folder + captions.jsonl, or
// WebDataset tar shards) for the demo, tests and benchmarks. Nothing is downloaded.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cli/command.h"
#include "cli/flag_table.h"
#include "common/error.h"
#include "data/synth.h"

namespace {

struct SynthArgs {
  std::string out;
  bt::data::SynthOptions opts;
};

void run(const SynthArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  bool tty = ::isatty(2);
  auto last = t0;
  bt::data::SynthProgress progress = [&](size_t done, size_t total) {
    auto now = std::chrono::steady_clock::now();
    if (!tty || (done != total && now - last < std::chrono::milliseconds(100))) return;
    last = now;
    int bar = int(30 * done / total);
    std::fprintf(stderr, "\rsynth [%.*s%*s] %zu/%zu images", bar, "==============================", 30 - bar, "",
                 done, total);
    if (done == total) std::fprintf(stderr, "\n");
  };
  bt::data::write_synth(a.out, a.opts, progress);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  size_t images = a.opts.images ? std::min(a.opts.images, a.opts.n) : std::max<size_t>(1, a.opts.n / 4);
  std::fprintf(stderr, "synth: wrote %zu rows, %zu images to %s (%s) in %.1f s\n", a.opts.n, images, a.out.c_str(),
               a.opts.tar ? "tar shards" : "images/ + captions.jsonl", s);
}

bt::cli::Registrar reg("synth", "Generate a synthetic cartoon image-caption dataset", 50, [](CLI::App& app) {
  auto a = std::make_shared<SynthArgs>();
  auto& o = a->opts;
  bt::cli::add_flag(app, bt::cli::flags::kOut, a->out)->required();
  app.add_option("--n", o.n, "Number of rows (image-caption pairs)")->capture_default_str();
  bt::cli::add_flag(app, bt::cli::flags::kSeed, o.seed);
  app.add_option("--images", o.images, "Distinct images shared by the rows (0 = n/4)")->capture_default_str();
  app.add_flag("--accents", o.accents, "Paint a coloured balloon on each picture (named in its caption)");
  app.add_flag("--tar", o.tar, "Write WebDataset tar shards instead of images/ + captions.jsonl");
  app.add_option("--shard_size", o.shard_size, "Rows per tar shard")->capture_default_str();
  app.add_option("--min_width", o.min_width, "Smallest image width in px")->capture_default_str();
  app.add_option("--max_width", o.max_width, "Largest image width in px")->capture_default_str();
  app.add_option("--quality", o.quality, "JPEG quality")->capture_default_str();
  app.add_option("--grain", o.grain, "Paper grain amplitude (drives the JPEG bitrate)")->capture_default_str();
  bt::cli::add_flag(app, bt::cli::flags::kThreads, o.threads);
  app.callback([a] {
    // A lone small --max_width scales the default range down (same spread as 800-1700).
    if (a->opts.max_width < a->opts.min_width) a->opts.min_width = std::max(16, a->opts.max_width * 8 / 17);
    run(*a);
  });
});

}  // namespace

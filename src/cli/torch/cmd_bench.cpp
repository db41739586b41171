// `bridgetune bench`: the benchmark's experiment on this machine. Trains the same model for a fixed number of
// steps once per loader configuration (--workers x media pipeline off/on, on only with a GPU) and once on
// batches made up front and kept in memory (the model's upper bound), then prints a markdown table, writes JSON
// (rewritten after every run) and a PNG bar chart, and names the bottleneck. On CPU the in-memory run is also
// made in the other precision (fp32 / bf16) to say which one this machine trains faster. Warm-up steps are excluded from samples/s as in training.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <tuple>

#include "cli/command.h"
#include "cli/flag_table.h"
#include "cli/hub_flags.h"
#include "cli/loader_flags.h"
#include "cli/perf_flags.h"
#include "common/cpu_isa.h"
#include "common/defaults.h"
#include "common/error.h"
#include "common/machine_memory.h"
#include "common/paths.h"
#include "common/process_memory.h"
#include "data/synth.h"
#include "model/api.h"
#include "report/bench_report.h"
#include "report/run_log.h"
#include "train/batch_search.h"
#include "train/trainer.h"

namespace bt::cli {
namespace {

namespace fs = std::filesystem;

struct BenchArgs {
  std::string data, out_dir = "runs/bench", workers = "0,1,2", preset = defaults::kModelPreset,
      device = defaults::kDevice, tokenizer, model;  // model: --model_name_or_path, a folder once resolved
  int batch = defaults::kTrainBatchSize, steps = 30, warmup = 5, image_size = 0, synth_n = 512, synth_max_width = 800;
  int decoded_cache_mb = 0, torch_threads = 0, repeats = 3, tokenizer_vocab_size = defaults::kBpeVocabSize;
  data::OnBad on_bad = data::OnBad::kError;  // --on_bad_sample: a bad file fails every row, or is skipped and counted
  uint64_t max_image_pixels = media::kDefaultMaxImagePixels;
  bool bf16 = false, media_pipeline_on = false;
  bool jpeg_dct_scaling = true;  // false: full-resolution decode, as a Python loader does ("like for like")
  loader::MediaDecode media_decode = loader::MediaDecode::kAuto;
  HubFlags hub;
  bool find_max_batch = false;  // instead of the throughput table: the largest micro-batch within max_memory_gb
  double max_memory_gb = 0;
  train::TrainOptions perf;  // --attention_backend, --loader_worker_nice/_affinity, --profile_steps: every run's
};

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size() || v < 0) throw std::invalid_argument("bad");
      out.push_back(v);
    } catch (const std::exception&) {
      fail("--workers: '", item, "' is not a worker count (use a list like 0,1,2)");
    }
  }
  if (out.empty()) fail("--workers: empty list");
  return out;
}

// The model measured: --model_name_or_path's folder (resolved), else the preset; as titles name it.
model::BridgeTowerConfig bench_model(const BenchArgs& a) {
  return a.model.empty() ? model::preset(a.preset) : model::load_pretrained_config(a.model);
}
std::string model_label(const BenchArgs& a) { return a.model.empty() ? a.preset + " preset" : a.model; }

using BenchConfigs = std::vector<std::pair<report::BenchRow, train::TrainOptions>>;

// "fp32", "bf16", or "bf16 emulated" on a CPU without bf16 arithmetic (model::cpu_bf16_note says what that costs).
std::string precision_label(const std::string& device, bool bf16) {
  if (!bf16) return "fp32";
  return device == "cpu" && !cpu_isa().bf16_native ? "bf16 emulated" : "bf16";
}
constexpr int kInMemoryBatches = 8;  // the in-memory row cycles this many batches

// The rows in measuring order: the model's ceiling first (a run cut short, e.g. by a time limit, still has what
// every other row is compared with), then each worker count with the media pipeline off, then on (GPU only).
BenchConfigs bench_configs(const BenchArgs& a, const train::TrainOptions& base, const std::vector<int>& workers) {
  BenchConfigs configs;
  {
    train::TrainOptions o = base;
    o.dataloader_num_workers = 0;  // the batches are made once, up front (kInMemoryBatches)
    o.media_decode = loader::MediaDecode::kAuto;
    report::BenchRow row{"in-memory batches", 0, false, true};
    row.bf16 = o.bf16;
    configs.push_back({row, o});
    if (a.device == "cpu") {  // which precision is faster on this CPU (bf16 is several times fp32 where native)
      o.bf16 = !o.bf16;
      report::BenchRow other{str("in-memory batches, ", precision_label(a.device, o.bf16)), 0, false, true};
      other.precision_check = true;
      other.bf16 = o.bf16;
      configs.push_back({other, o});
    }
  }
  const bool gpu = a.device != "cpu";
  for (bool media : {false, true}) {
    if (media && !(gpu && a.media_pipeline_on)) continue;
    for (int w : workers) {
      train::TrainOptions o = base;
      o.dataloader_num_workers = w;
      o.use_media_pipeline = media;
      if (!media) o.media_decode = loader::MediaDecode::kAuto;  // the media pipeline's: the loader rows decode on the CPU
      configs.push_back({{str("workers ", w, media ? " + GPU media" : ""), w, media, false}, o});
    }
  }
  return configs;
}

// The dataset: --data, else generated cartoons in the output folder (kept for the next bench run).
std::string bench_data(const BenchArgs& a, const fs::path& out) {
  if (!a.data.empty()) return a.data;
  const std::string data = (out / "data").string();
  if (!fs::exists(fs::path(data) / "captions.jsonl")) {
    data::SynthOptions so;
    so.n = static_cast<size_t>(a.synth_n);
    so.seed = 7;
    so.max_width = std::max(a.synth_max_width, 200);
    so.min_width = std::min(800, so.max_width / 2);
    std::printf("generating %d cartoon rows (%d-%d px wide) in %s\n", a.synth_n, so.min_width, so.max_width, data.c_str());
    data::write_synth(data, so);
  }
  return data;
}

// What every row shares: model, data, steps, and one intra-op thread count (or the rows would differ in compute
// too: by default the cores the largest worker count leaves free, as `train` picks for that count).
train::TrainOptions base_options(const BenchArgs& a, const std::string& data, int threads) {
  train::TrainOptions base;
  base.model_preset = a.preset;
  base.model_name_or_path = a.model;
  base.tokenizer_name = a.tokenizer;
  base.tokenizer_vocab_size = a.tokenizer_vocab_size;
  base.read.on_bad = a.on_bad;
  base.max_image_pixels = a.max_image_pixels;
  base.model_revision = a.hub.revision;
  base.cache_dir = a.hub.cache_dir;
  base.train_file = data;
  base.per_device_train_batch_size = a.batch;
  base.max_steps = a.steps;
  base.throughput_warmup_steps = a.warmup;
  base.image_size = a.image_size;
  base.device = a.device;
  base.bf16 = a.bf16;
  base.torch_threads = threads;
  base.decoded_cache_mb = a.decoded_cache_mb;
  base.media_decode = a.media_decode;
  base.jpeg_dct_scaling = a.jpeg_dct_scaling;
  base.logging_steps = a.steps;
  base.learning_rate = 1e-4;
  base.overwrite_output_dir = true;
  base.attention_backend = a.perf.attention_backend, base.profile_steps = a.perf.profile_steps;
  base.loader_worker_nice = a.perf.loader_worker_nice, base.loader_worker_affinity = a.perf.loader_worker_affinity;
  return base;
}

// The report's rows over the runs measured so far: each configuration's median run by throughput, with its own
// data wait, and its last run's work (train_results.json's model_flops_per_sample and peak: the row's TFLOP/s and
// MFU at the median's samples/s).
void build_rows(report::BenchReport& rep, const BenchConfigs& configs,
                const std::vector<std::vector<std::pair<double, double>>>& samples,
                const std::vector<std::string>& paths, const std::vector<std::pair<uint64_t, uint64_t>>& memory,
                const std::vector<nlohmann::json>& work) {
  rep.rows.clear();
  for (size_t c = 0; c < configs.size(); ++c) {
    if (samples[c].empty()) continue;
    auto v = samples[c];
    std::sort(v.begin(), v.end());
    report::BenchRow row = configs[c].first;
    row.samples_per_s = v[v.size() / 2].first;
    row.data_wait_percent = v[v.size() / 2].second;
    for (const auto& run : v) row.runs.push_back(run.first);  // the verdicts compare against their spread
    row.paths = paths[c];
    std::tie(row.peak_memory_bytes, row.step_memory_bytes) = memory[c];
    const nlohmann::json& w = work[c];
    row.model_flops_per_sample = w.value("model_flops_per_sample", 0.0);
    row.peak_flops = w.contains("peak_tflops") && w["peak_tflops"].is_number() ? w["peak_tflops"].get<double>() * 1e12 : 0;
    row.peak_source = w.value("peak_source", "");
    rep.rows.push_back(row);
  }
}

// One measured run as bench makes them: quiet, no plot, no final model or evaluation, with `in_memory_batches`
// (0: the loader) and without the previous run's freed pages counted in its memory.
train::TrainSummary measured_run(const train::TrainOptions& o, int in_memory_batches) {
  release_free_memory();
  train::TrainHooks hooks;
  hooks.quiet = true;
  hooks.write_plot = false;
  hooks.save_final_model = false;
  hooks.in_memory_batches = in_memory_batches;
  train::TrainInputs no_final_eval;
  no_final_eval.eval_at_end = false;
  return train::run_train(o, hooks, no_final_eval);
}

void run(const BenchArgs& a) {
  const auto workers = parse_list(a.workers);
  const fs::path out(a.out_dir);
  bt::make_output_folder(out, "--output_dir");
  const std::string data = bench_data(a, out);
  // One thread count for every row: train's rule (model/api.h) for the largest worker count.
  const int threads = model::torch_threads_for(a.torch_threads, *std::max_element(workers.begin(), workers.end()),
                                               a.device == "cpu", model::parameter_count(bench_model(a)));
  const train::TrainOptions base = base_options(a, data, threads);

  report::BenchReport rep;
  rep.title = str("bridgetune bench: ", model_label(a), ", batch ", a.batch, ", ", a.steps, " steps (", a.warmup,
                  " warm-up), ", a.device, a.bf16 ? " " + precision_label(a.device, true) : "",
                  a.jpeg_dct_scaling ? "" : ", full-resolution JPEG decode",
                  a.device == "cpu" ? str(", ", threads, " torch threads") : "");
  if (a.device == "cpu")  // every CPU table has a bf16 row
    if (const std::string note = model::cpu_bf16_note(); !note.empty()) std::printf("%s\n", note.c_str());
  // Every configuration once per repetition, interleaved (machine noise hits all alike); medians reported.
  const auto configs = bench_configs(a, base, workers);
  std::vector<std::vector<std::pair<double, double>>> samples(configs.size());
  std::vector<std::string> errors;  // "label: message" of every failed run
  std::vector<std::string> paths(configs.size());  // the last run's fast paths per configuration
  std::vector<std::pair<uint64_t, uint64_t>> memory(configs.size());  // the most peak / step memory of its runs
  std::vector<nlohmann::json> work(configs.size(), nlohmann::json::object());  // the last run's FLOP keys
  // bench_results.json is rewritten after every run ("complete": false until the last), so a run cut off by a
  // time limit (the GPU check's) still leaves every row it measured.
  auto write_json = [&](bool complete) {
    build_rows(rep, configs, samples, paths, memory, work);
    auto j = rep.to_json();
    j["complete"] = complete;
    j["errors"] = errors;
    report::write_json_atomic(out / "bench_results.json", j);
  };
  for (int rep_i = 0; rep_i < a.repeats; ++rep_i)
    for (size_t c = 0; c < configs.size(); ++c) {
      auto [row, o] = configs[c];
      o.output_dir = (out / "runs" / (row.in_memory ? str("in_memory", row.precision_check ? (row.bf16 ? "_bf16" : "_fp32") : "")
                                                    : str("w", row.workers, row.media_pipeline ? "_gpu" : ""))).string();
      std::printf("[%d/%d] %-24s ... ", rep_i + 1, a.repeats, row.label.c_str());
      std::fflush(stdout);
      try {
        auto s = measured_run(o, row.in_memory ? kInMemoryBatches : 0);
        work[c] = s.results;
        std::printf("%.1f samples/s, data wait %.1f %%, %.3g TFLOP/s\n", s.train_samples_per_second,
                    s.data_wait_percent, s.results.value("tflops_per_s", 0.0));
        samples[c].push_back({s.train_samples_per_second, s.data_wait_percent});
        memory[c] = {std::max(memory[c].first, s.peak_memory_bytes), std::max(memory[c].second, s.step_memory_bytes)};
        paths[c] = row.in_memory || !row.media_pipeline ? s.op_paths
                                                        : str(s.op_paths, ", media_decode ",
                                                              enum_word(kMediaDecodeWords, a.media_decode));
      } catch (const std::exception& e) {  // one failing configuration (e.g. out of memory) must not lose the rest
        std::printf("FAILED: %s\n", e.what());
        errors.push_back(str(row.label, ": ", e.what()));
      }
      std::fflush(stdout);
      write_json(false);
    }
  write_json(true);
  if (rep.rows.empty()) fail("bench: every configuration failed; the first: ", errors.front());
  std::printf("\n%s\n%s\n%s\n", rep.title.c_str(), rep.markdown().c_str(), rep.verdict().c_str());
  if (const std::string note = rep.precision_note(); !note.empty()) std::printf("%s\n", note.c_str());
  rep.write_png(out / "bench.png");
  std::printf("\nwrote %s and %s\n", (out / "bench_results.json").c_str(), (out / "bench.png").c_str());
  if (!errors.empty()) fail("bench: ", errors.size(), " run(s) failed; the first: ", errors.front());
}

std::string number(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}
std::string gb(uint64_t bytes) { return number("%.2f", double(bytes) / double(1ull << 30)); }

// One probe of --find_max_batch: two steps at `batch` on one batch kept in memory (the second step runs with the
// optimizer state allocated, where the peak is); its memory is the step loop's peak (model/device.h).
train::BatchProbe probe_batch(train::TrainOptions o, int batch, bool checkpointing, const fs::path& dir) {
  o.per_device_train_batch_size = batch;
  o.gradient_checkpointing = checkpointing;
  o.max_steps = 2, o.throughput_warmup_steps = 1, o.logging_steps = 2;
  o.dataloader_num_workers = 0;
  o.output_dir = dir.string();
  train::BatchProbe p;
  p.ran = true;
  std::printf("  batch %-5d ... ", batch);
  std::fflush(stdout);
  try {
    const auto s = measured_run(o, /*in_memory_batches=*/1);
    p.peak_bytes = s.peak_memory_bytes;
    p.samples_per_s = s.train_samples_per_second;
    std::printf("%s GB, %.2f samples/s\n", gb(p.peak_bytes).c_str(), p.samples_per_s);
  } catch (const std::exception& e) {  // out of memory on a GPU, too few rows: bounds the search
    const std::string what = e.what();
    p.error = what.substr(0, std::min<size_t>(what.find('\n'), 200));
    std::printf("failed: %s\n", p.error.c_str());
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return p;
}

// --find_max_batch: for the preset and precision, the largest micro-batch whose steps fit --max_memory_gb, without
// and with gradient checkpointing (train/batch_search.h), and the contrastive batch exact accumulation builds
// from it. Writes find_max_batch.json.
void run_find_max_batch(const BenchArgs& a) {
  const fs::path out(a.out_dir);
  bt::make_output_folder(out, "--output_dir");
  const auto budget = static_cast<uint64_t>(a.max_memory_gb * double(1ull << 30));
  if (a.device == "cpu") {  // a CPU probe past the machine's memory is killed by the kernel, bench with it
    const uint64_t can = machine_memory_bytes() + rss_bytes();
    if (can > 0 && budget > can)
      fail("--max_memory_gb ", a.max_memory_gb, ": this machine can give this process about ", gb(can),
           " GB; a larger budget lets a probe meet the kernel's OOM killer (lower --max_memory_gb)");
  }
  const std::string data = bench_data(a, out);
  const int threads = a.torch_threads > 0 ? a.torch_threads : 0;  // 0: every core (no loader workers here)
  const train::TrainOptions base = base_options(a, data, threads);
  train::BatchSearchOptions so;
  so.budget_bytes = budget;
  if (a.data.empty()) so.max_batch = a.synth_n;
  const std::string what = str(model_label(a), ", ", a.device, a.bf16 ? " bf16" : " fp32",
                               a.image_size ? str(", ", a.image_size, " px") : std::string());
  nlohmann::json modes = nlohmann::json::array();
  std::string table = "| gradient checkpointing | largest micro-batch | peak memory GB | samples/s | why not larger | "
                      "contrastive batch, exact accumulation K = 2 / 4 / 8 |\n|---|---:|---:|---:|---|---|\n";
  for (bool ckpt : {false, true}) {
    std::printf("largest micro-batch within %g GB, %s, gradient checkpointing %s:\n", a.max_memory_gb, what.c_str(),
                ckpt ? "on" : "off");
    const auto res = train::find_max_batch(
        [&](int b) { return probe_batch(base, b, ckpt, out / "runs" / str("max_batch", ckpt ? "_ckpt_" : "_", b)); }, so);
    const train::BatchProbe* best = nullptr;
    nlohmann::json probes = nlohmann::json::array();
    for (const auto& p : res.probes) {
      if (p.batch == res.largest_fit && p.fits) best = &p;
      probes.push_back({{"batch", p.batch}, {"ran", p.ran}, {"fits", p.fits}, {"peak_memory_bytes", p.peak_bytes},
                        {"samples_per_s", p.samples_per_s}, {"error", p.error}});
    }
    const int b = res.largest_fit;
    table += str("| ", ckpt ? "on" : "off", " | ", b, " | ", best ? gb(best->peak_bytes) : "-", " | ",
                 best ? number("%.2f", best->samples_per_s) : "-", " | ", res.bound, " | ",
                 b ? str(2 * b, " / ", 4 * b, " / ", 8 * b) : "-", " |\n");
    modes.push_back({{"gradient_checkpointing", ckpt}, {"largest_micro_batch", b}, {"bound", res.bound},
                     {"peak_memory_bytes", best ? best->peak_bytes : 0}, {"samples_per_s", best ? best->samples_per_s : 0.0},
                     {"probes", probes}});
  }
  const std::string title = str("bridgetune bench --find_max_batch: ", what, ", budget ", a.max_memory_gb, " GB (",
                                a.device == "cpu" ? "peak resident memory of the step loop" : "max_memory_allocated", ")");
  std::printf("\n%s\n%s\n%s\n", title.c_str(), table.c_str(),
              "--gradient_accumulation_steps K trains K micro-batches as one contrastive batch of K x B (exact: one "
              "loss over all; about one extra forward per micro-batch).");
  report::write_json_atomic(out / "find_max_batch.json",
                            {{"title", title}, {"budget_bytes", budget}, {"preset", a.preset}, {"device", a.device},
                             {"bf16", a.bf16}, {"image_size", a.image_size}, {"modes", modes}});
  std::printf("wrote %s\n", (out / "find_max_batch.json").c_str());
}

void setup(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  add_flag(app, flags::kData, a->data);
  add_flag(app, flags::kOutputDir, a->out_dir);
  add_flag(app, flags::kWorkers, a->workers);
  add_flag(app, flags::kModelPreset, a->preset);
  add_flag(app, flags::kModelNameOrPath, a->model);
  add_flag(app, flags::kTokenizerName, a->tokenizer);
  add_flag(app, flags::kTokenizerVocabSize, a->tokenizer_vocab_size);
  add_enum(app, flags::kOnBadSample, a->on_bad, kOnBadWords);
  add_flag(app, flags::kMaxImagePixels, a->max_image_pixels)->check(CLI::PositiveNumber);
  add_hub_flags(app, &a->hub.revision, &a->hub.cache_dir);
  add_flag(app, flags::kPerDeviceTrainBatchSize, a->batch, ",--batch");
  add_flag(app, flags::kMaxSteps, a->steps, ",--steps");
  add_flag(app, flags::kThroughputWarmupSteps, a->warmup);
  add_flag(app, flags::kImageSize, a->image_size);
  add_flag(app, flags::kDevice, a->device);
  add_switch(app, flags::kBf16, a->bf16);
  add_flag(app, flags::kJpegDctScaling, a->jpeg_dct_scaling);
  add_switch(app, flags::kUseMediaPipeline, a->media_pipeline_on);
  add_enum(app, flags::kMediaDecode, a->media_decode, kMediaDecodeWords);
  add_flag(app, flags::kDecodedCacheMb, a->decoded_cache_mb);
  add_flag(app, flags::kTorchThreads, a->torch_threads);  // as train picks for the largest --workers count
  add_flag(app, flags::kRepeats, a->repeats);
  app.add_option("--synth_n", a->synth_n, "Rows of generated data")->capture_default_str();
  app.add_option("--synth_max_width", a->synth_max_width, "Widest generated image (px)")->capture_default_str();
  app.add_flag("--find_max_batch", a->find_max_batch,
               "Instead of the throughput table: the largest micro-batch whose steps fit --max_memory_gb, without and "
               "with --gradient_checkpointing, found by measuring (2 steps per probe; the data's rows bound it)");
  app.add_option("--max_memory_gb", a->max_memory_gb,
                 "--find_max_batch's budget: peak resident memory on the CPU, max_memory_allocated on CUDA");
  add_perf_flags(app, &a->perf);  // cli/perf_flags.h
  app.callback([a] {
    a->model = a->hub.resolve(a->model);  // a hub id: its snapshot folder (train reads a folder unchanged)
    if (a->batch < 2) fail("--batch must be >= 2");
    if (a->repeats < 1) fail("--repeats must be >= 1");
    if (a->find_max_batch) {
      if (!(a->max_memory_gb > 0)) fail("--find_max_batch needs --max_memory_gb (the budget, in GB)");
      return run_find_max_batch(*a);
    }
    if (a->max_memory_gb > 0) fail("--max_memory_gb is --find_max_batch's budget (add --find_max_batch)");
    if (a->steps <= a->warmup) fail("--max_steps (", a->steps, ") must exceed --throughput_warmup_steps (", a->warmup, ")");
    run(*a);
  });
}

const Registrar reg("bench", "Training throughput per loader configuration vs the in-memory upper bound", 31, setup);

}  // namespace
}  // namespace bt::cli

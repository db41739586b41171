// model/flops.h against torch's profiler on HF transformers' BridgeTowerForContrastiveLearning
// (fixtures/flops_hf_profiler.json, made by fixtures/make_flops_fixture.py with transformers 4.30.2 on torch 1.13):
// forward and forward + backward FLOPs per op class at the tiny and small presets, HF's parameter counts and its
// floating_point_ops. The comparison is exact (integers in doubles): the same op classes on both sides (the profiler
// counts aten::mm/addmm/bmm/conv2d products and, apart, elementwise ops that the model count leaves out), with the one
// structural difference named (HF's head transforms every image token: hf_extra_head_flops). Also: padding,
// a closed form for the large preset, and the peak table (model/flops_peak.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model_fixtures_dir.h"
#include "model/config.h"
#include "model/flops.h"
#include "model/flops_peak.h"

namespace bt::model {
namespace {

nlohmann::json fixture() {
  std::ifstream f(std::string(BT_MODEL_FIXTURES) + "/flops_hf_profiler.json");
  EXPECT_TRUE(f.good());
  return nlohmann::json::parse(f);
}

double op(const nlohmann::json& counts, const char* name) { return counts.value(name, 0.0); }

TEST(Flops, FixturePresetsAreBridgetunesPresets) {
  const auto fx = fixture();
  for (auto& [name, j] : fx["presets"].items()) {
    const BridgeTowerConfig got = config_from_json(j, name), want = preset(name);
    EXPECT_EQ(got.hidden_size, want.hidden_size) << name;
    EXPECT_EQ(got.num_hidden_layers, want.num_hidden_layers) << name;
    EXPECT_EQ(got.contrastive_hidden_size, want.contrastive_hidden_size) << name;
    EXPECT_EQ(got.text.hidden_size, want.text.hidden_size) << name;
    EXPECT_EQ(got.text.num_hidden_layers, want.text.num_hidden_layers) << name;
    EXPECT_EQ(got.text.intermediate_size, want.text.intermediate_size) << name;
    EXPECT_EQ(got.vision.hidden_size, want.vision.hidden_size) << name;
    EXPECT_EQ(got.vision.num_hidden_layers, want.vision.num_hidden_layers) << name;
    EXPECT_EQ(got.vision.image_size, want.vision.image_size) << name;
    EXPECT_EQ(got.vision.patch_size, want.vision.patch_size) << name;
  }
}

TEST(Flops, ForwardEqualsTorchProfilerOpClassByOpClass) {
  const auto fx = fixture();
  ASSERT_EQ(fx["cases"].size(), 4u);
  for (const auto& c : fx["cases"]) {
    const BridgeTowerConfig cfg = preset(c["preset"].get<std::string>());
    const int64_t b = c["batch"], l = c["text_len"];
    ASSERT_EQ(c["image_size"].get<int>(), cfg.vision.image_size);
    const ForwardFlops f = forward_flops(cfg, b, l);
    const auto& p = c["forward"];
    const std::string at = c.dump().substr(0, 60);
    EXPECT_EQ(op(p, "aten::conv2d"), f.patch) << at;
    EXPECT_EQ(op(p, "aten::bmm"), f.attention) << at;
    EXPECT_EQ(op(p, "aten::mm") + op(p, "aten::addmm"), f.linear + f.loss + double(b) * hf_extra_head_flops(cfg)) << at;
    EXPECT_EQ(op(p, "aten::mm"), f.loss) << at;  // the only 2-D products HF runs without a bias
    EXPECT_DOUBLE_EQ(f.vision + f.text + f.cross_modal + f.heads, f.total()) << at;
  }
}

// Backward: every Linear and batched product has two products of its forward's size (the gradients of both
// operands); the convolution's backward is not counted by the profiler (convolution_backward has no formula there).
TEST(Flops, BackwardIsTwiceTheForwardExceptThePatchEmbedding) {
  const nlohmann::json fx = fixture();  // fixture()["cases"] in the range-for would dangle (a temporary)
  for (const auto& c : fx["cases"]) {
    const BridgeTowerConfig cfg = preset(c["preset"].get<std::string>());
    const int64_t b = c["batch"], l = c["text_len"];
    const ForwardFlops f = forward_flops(cfg, b, l);
    const auto &fw = c["forward"], &both = c["forward_backward"];
    const double bwd_mm = op(both, "aten::mm") + op(both, "aten::addmm") - op(fw, "aten::mm") - op(fw, "aten::addmm");
    EXPECT_EQ(bwd_mm, 2 * (f.linear + f.loss + double(b) * hf_extra_head_flops(cfg)));
    EXPECT_EQ(op(both, "aten::bmm") - op(fw, "aten::bmm"), 2 * f.attention);
    EXPECT_EQ(op(both, "aten::conv2d"), f.patch);
    double profiled = 0;
    for (const char* k : {"aten::mm", "aten::addmm", "aten::bmm", "aten::conv2d"}) profiled += op(both, k);
    const double hf_extra = kTrainFlopsPerForward * double(b) * hf_extra_head_flops(cfg);
    // 3 x forward counts the patch embedding's backward (its weight gradient) that the profiler leaves out
    EXPECT_EQ(kTrainFlopsPerForward * f.total(), profiled - hf_extra + 2 * f.patch);
  }
}

TEST(Flops, HfParameterCountsAndTotalFlos) {
  const nlohmann::json fx = fixture();  // fixture()["cases"] in the range-for would dangle (a temporary)
  for (const auto& c : fx["cases"]) {
    const BridgeTowerConfig cfg = preset(c["preset"].get<std::string>());
    const ParameterCounts p = contrastive_parameter_counts(cfg);
    EXPECT_EQ(p.total, c["num_parameters"].get<int64_t>());
    EXPECT_EQ(p.total - p.embedding, c["num_parameters_exclude_embeddings"].get<int64_t>());
    const double tokens = c["batch"].get<double>() * c["text_len"].get<double>();
    EXPECT_EQ(hf_total_flos(cfg, tokens), c["hf_floating_point_ops"].get<double>());
  }
  // `bridgetune info --model_preset base` (tests/model/CMakeLists.txt: cli_info) counts the built model's tensors
  EXPECT_EQ(contrastive_parameter_counts(preset("base")).total, 327921409);
}

// The large preset (the GPU headline) in closed form: per layer, Linear 2*L*(in*out) and attention 4*Lq*Lk*h.
TEST(Flops, LargePresetClosedForm) {
  const BridgeTowerConfig c = preset("large");
  const double h = 1024, li = 21 * 21 + 1, lt = 128, inter = 4096;
  const double vision = 2 * 441 * h * 3 * 14 * 14 + 24 * (24 * li * h * h + 4 * li * li * h);
  const double text = 24 * (8 * lt * h * h + 4 * lt * h * inter + 4 * lt * lt * h);
  const auto side = [&](double self, double other) {
    return 8 * self * h * h + 4 * self * self * h + 4 * self * h * h + 4 * other * h * h + 4 * self * other * h +
           4 * self * h * inter;
  };
  const double cross = 6 * (2 * lt * h * h + 2 * li * h * h + side(lt, li) + side(li, lt));
  const double heads = 4 * h * h + 2 * h * 512 + 2 * h * h + 2 * h * 512 + 4 * h * 512;
  const ForwardFlops f = sample_forward_flops(c, 128);
  EXPECT_EQ(f.vision, vision);
  EXPECT_EQ(f.text, text);
  EXPECT_EQ(f.cross_modal, cross);
  EXPECT_EQ(f.heads, heads);
  EXPECT_NEAR(f.total() / 1e9, 495.54, 0.01);  // GFLOP per sample, forward
}

TEST(Flops, PaddingIsWhatTheRowsWouldSaveAtTheirRealLengths) {
  const BridgeTowerConfig c = preset("small");
  const StepFlops full = train_flops(c, 40, {40, 40, 40});
  EXPECT_EQ(full.padding, 0);
  EXPECT_EQ(full.model, 3 * forward_flops(c, 3, 40).total());
  EXPECT_EQ(full.text_tokens, 120);
  EXPECT_EQ(full.samples, 3);
  const StepFlops padded = train_flops(c, 40, {40, 12, 25});
  EXPECT_EQ(padded.model, full.model);  // a padded batch computes what a full one does
  const double at = [&](int l) { return sample_forward_flops(c, l).total(); }(40);
  const double want = 3 * ((at - sample_forward_flops(c, 12).total()) + (at - sample_forward_flops(c, 25).total()));
  EXPECT_DOUBLE_EQ(padded.padding, want);
  // Text attention grows with the square of the length: one pad token costs more in a longer batch.
  const double one_at_40 = sample_forward_flops(c, 40).total() - sample_forward_flops(c, 39).total();
  const double one_at_20 = sample_forward_flops(c, 20).total() - sample_forward_flops(c, 19).total();
  EXPECT_GT(one_at_40, one_at_20);
  StepFlops sum = full;
  sum += padded;
  EXPECT_EQ(sum.model, 2 * full.model);
  EXPECT_EQ(sum.padding, padded.padding);
  EXPECT_EQ(sum.samples, 6);
}

TEST(FlopsPeak, DatasheetPeaksByCudaDeviceName) {
  const double T = 1e12;
  EXPECT_EQ(gpu_peak_flops("NVIDIA H100 80GB HBM3", MatmulPrecision::kBf16).flops_per_s, 989 * T);
  EXPECT_EQ(gpu_peak_flops("NVIDIA H100 80GB HBM3", MatmulPrecision::kTf32).flops_per_s, 494 * T);
  EXPECT_EQ(gpu_peak_flops("NVIDIA H200", MatmulPrecision::kBf16).flops_per_s, 989 * T);
  EXPECT_EQ(gpu_peak_flops("NVIDIA H200", MatmulPrecision::kFp16).flops_per_s, 989 * T);
  EXPECT_EQ(gpu_peak_flops("NVIDIA H100 PCIe", MatmulPrecision::kBf16).flops_per_s, 756.5 * T);
  EXPECT_EQ(gpu_peak_flops("NVIDIA A100-SXM4-80GB", MatmulPrecision::kBf16).flops_per_s, 312 * T);
  EXPECT_EQ(gpu_peak_flops("NVIDIA A100-SXM4-80GB", MatmulPrecision::kTf32).flops_per_s, 156 * T);
  EXPECT_EQ(gpu_peak_flops("NVIDIA A100 80GB PCIe", MatmulPrecision::kFp32).flops_per_s, 19.5 * T);
  EXPECT_EQ(gpu_peak_flops("NVIDIA L40S", MatmulPrecision::kBf16).flops_per_s, 366.5 * T);  // not the L4's
  EXPECT_EQ(gpu_peak_flops("NVIDIA L4", MatmulPrecision::kBf16).flops_per_s, 121 * T);
  const PeakFlops unknown = gpu_peak_flops("NVIDIA GeForce RTX 4090", MatmulPrecision::kBf16);
  EXPECT_EQ(unknown.flops_per_s, 0);
  EXPECT_NE(unknown.source.find("RTX 4090"), std::string::npos);
}

TEST(FlopsPeak, UtilizationKeys) {
  const auto j = utilization_json(494.5e12, gpu_peak_flops("NVIDIA H200", MatmulPrecision::kBf16));
  EXPECT_DOUBLE_EQ(j["tflops_per_s"].get<double>(), 494.5);
  EXPECT_DOUBLE_EQ(j["mfu"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["peak_tflops"].get<double>(), 989);
  EXPECT_NE(j["peak_source"].get<std::string>().find("H200"), std::string::npos);
  const auto none = utilization_json(1e12, {});
  EXPECT_TRUE(none["mfu"].is_null());
  EXPECT_TRUE(none["peak_tflops"].is_null());
}

// Issue 57: the CPU peak is measured once per machine configuration and kept in a cache file under the user's cache
// folder (XDG_CACHE_HOME), keyed by CPU, instruction-set path, kernel, precision and threads; a malformed file or
// entry is none (measured again), never an error.
TEST(FlopsPeak, CpuPeaksAreCachedPerMachineConfiguration) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("bt_peak_cache_" + std::to_string(getpid()));
  fs::remove_all(root);
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", root.c_str(), 1);
  const std::string path = cpu_peak_cache_path();
  EXPECT_EQ(path, (root / "bridgetune" / "cpu_peak.json").string());
  const CpuPeakKey fp32{"Some CPU @ 2.0GHz", "AVX2, bf16 emulated", "onednn sgemm", "fp32", 2};
  CpuPeakKey bf16 = fp32;
  bf16.precision = "bf16";
  EXPECT_EQ(cached_cpu_peak(path, fp32).flops_per_s, 0);  // nothing cached yet
  EXPECT_EQ(store_cpu_peak(path, fp32, 121e9, "this CPU's fp32 GEMM (best of 12)"), "");
  const PeakFlops p = cached_cpu_peak(path, fp32);
  EXPECT_DOUBLE_EQ(p.flops_per_s, 121e9);
  EXPECT_EQ(p.source.rfind("cached: this CPU's fp32 GEMM (best of 12): 121 GFLOP/s, measured ", 0), 0u) << p.source;
  EXPECT_NE(p.source.find(path), std::string::npos) << p.source;
  EXPECT_EQ(cached_cpu_peak(path, bf16).flops_per_s, 0);  // another key: measured apart
  CpuPeakKey threads = fp32;
  threads.threads = 1;
  EXPECT_EQ(cached_cpu_peak(path, threads).flops_per_s, 0);
  EXPECT_EQ(store_cpu_peak(path, bf16, 300e9, "bf16"), "");
  EXPECT_DOUBLE_EQ(cached_cpu_peak(path, fp32).flops_per_s, 121e9);  // kept beside the new entry
  for (const char* bad : {"not json", "{\"format\": \"bridgetune-cpu-peak-1\", \"peaks\": []}",
                          "{\"format\": \"bridgetune-cpu-peak-1\", \"peaks\": {\"x\": -1}}"}) {
    std::ofstream(path) << bad;
    EXPECT_EQ(cached_cpu_peak(path, fp32).flops_per_s, 0) << bad;
  }
  std::ofstream(path) << "{\"format\": \"bridgetune-cpu-peak-1\", \"peaks\": {\"" << fp32.text()
                      << "\": {\"flops_per_s\": -5}}}";
  EXPECT_EQ(cached_cpu_peak(path, fp32).flops_per_s, 0);
  std::ofstream(path) << "{\"format\": \"bridgetune-cpu-peak-1\", \"peaks\": {\"" << fp32.text()
                      << "\": {\"flops_per_s\": 1e300}}}";  // no CPU's (and its GFLOP/s would overflow an int)
  EXPECT_EQ(cached_cpu_peak(path, fp32).flops_per_s, 0);
  EXPECT_EQ(store_cpu_peak(path, fp32, 99e9, "again"), "");  // a bad file is rewritten
  EXPECT_DOUBLE_EQ(cached_cpu_peak(path, fp32).flops_per_s, 99e9);
  if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else unsetenv("XDG_CACHE_HOME");
  fs::remove_all(root);
}

}  // namespace
}  // namespace bt::model

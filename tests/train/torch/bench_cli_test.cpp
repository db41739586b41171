// `bridgetune bench` (src/cli/torch/cmd_bench.cpp): the in-memory ceiling is measured first, bench_results.json
// says whether it is complete, and a failing configuration is recorded without losing the rest.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "common/cpu_isa.h"
#include "data/synth.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {
// Runs bridgetune with args (output in LOG), sets *rc, and returns the JSON file `json` it wrote (null if none).
nlohmann::json run_json(const std::vector<std::string>& args, const std::string& log, const fs::path& json, int* rc) {
  *rc = bt::test::wait_exit_code(bt::test::spawn_bridgetune(args, log));
  std::ifstream f(json);
  return f ? nlohmann::json::parse(f) : nlohmann::json();
}

nlohmann::json run_bench(const fs::path& dir, std::vector<std::string> extra, int* rc) {
  std::vector<std::string> args{"bench", "--batch", "2", "--steps", "2", "--throughput_warmup_steps", "1",
                                "--repeats", "1", "--workers", "0", "--synth_n", "6", "--synth_max_width", "120",
                                "--torch_threads", "1", "--output_dir", dir.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_json(args, dir.string() + ".log", dir / "bench_results.json", rc);
}
}  // namespace

TEST(BenchCli, InMemoryRowFirstAndJsonComplete) {
  const fs::path dir = fs::temp_directory_path() / "bt_bench_cli_ok";
  fs::remove_all(dir);
  int rc = -1;
  const auto j = run_bench(dir, {}, &rc);
  ASSERT_EQ(rc, 0) << bt::test::slurp(dir.string() + ".log");
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_TRUE(j["rows"][0]["in_memory"].get<bool>());
  EXPECT_FALSE(j["rows"][0]["bf16"].get<bool>());
  // On CPU the ceiling is measured in bf16 too (labelled emulated on a CPU without bf16, as capped), and the report
  // says which precision is faster here.
  EXPECT_EQ(j["rows"][1]["label"], bt::cpu_isa().bf16_native ? "in-memory batches, bf16" : "in-memory batches, bf16 emulated");
  EXPECT_TRUE(j["rows"][1]["precision_check"].get<bool>());
  EXPECT_EQ(j["precision"].get<std::string>().rfind("precision: bf16 runs the model ", 0), 0u) << j["precision"];
  EXPECT_EQ(j["rows"][2]["label"], "workers 0");
  for (const auto& row : j["rows"]) {  // the work: model FLOPs per second, and MFU against the measured CPU GEMM rate
    EXPECT_GT(row["tflops_per_s"].get<double>(), 0) << row;
    EXPECT_GT(row["mfu"].get<double>(), 0) << row;
    EXPECT_NE(row["peak_source"].get<std::string>().find("measured"), std::string::npos) << row;
  }
  EXPECT_TRUE(j["complete"].get<bool>());
  EXPECT_TRUE(j["errors"].empty());
}

TEST(BenchCli, FailingConfigurationsAreRecordedAndTheExitStatusSaysSo) {
  const fs::path dir = fs::temp_directory_path() / "bt_bench_cli_bad";
  fs::remove_all(dir);
  int rc = -1;
  const auto j = run_bench(dir, {"--image_size", "3"}, &rc);  // smaller than a patch: every run fails
  EXPECT_NE(rc, 0);
  ASSERT_TRUE(j.is_object()) << bt::test::slurp(dir.string() + ".log");
  EXPECT_TRUE(j["rows"].empty());
  ASSERT_EQ(j["errors"].size(), 3u);
  EXPECT_NE(j["errors"][0].get<std::string>().find("in-memory batches: "), std::string::npos);
  EXPECT_NE(bt::test::slurp(dir.string() + ".log").find("every configuration failed"), std::string::npos);
}

// Every row names the fast paths it ran; with the fast paths forced to fail (BRIDGETUNE_FUSED_OPS=fail) the rows are
// still written and say they fell back.
TEST(BenchCli, RowsNameTheirPathsAndSurviveFailingFusedOps) {
  const fs::path dir = fs::temp_directory_path() / "bt_bench_cli_paths";
  fs::remove_all(dir);
  int rc = -1;
  ASSERT_EQ(setenv("BRIDGETUNE_FUSED_OPS", "fail", 1), 0);  // inherited by the spawned bridgetune
  const auto j = run_bench(dir, {}, &rc);
  unsetenv("BRIDGETUNE_FUSED_OPS");
  const std::string log = bt::test::slurp(dir.string() + ".log");
  ASSERT_EQ(rc, 0) << log;
  ASSERT_EQ(j["rows"].size(), 3u);  // in-memory fp32 and bf16, workers 0
  for (const auto& row : j["rows"]) {
    const std::string paths = row["paths"].get<std::string>();
    EXPECT_NE(paths.find("adamw foreach (fused kernel failed)"), std::string::npos) << paths;
    EXPECT_NE(paths.find("quick_gelu composite (CUDA kernel failed)"), std::string::npos) << paths;
  }
  EXPECT_NE(log.find("QuickGELU CUDA kernel failed"), std::string::npos) << log;
  // without the knob, a CPU run names the plain paths
  const auto plain = run_bench(dir, {}, &rc);
  ASSERT_EQ(rc, 0);
  // (and attention's backend per tower: eager on libtorch 1.13, torch's SDPA on a 2.x CPU; model/attention_backend.h)
  EXPECT_EQ(plain["rows"][0]["paths"].get<std::string>().rfind("adamw foreach, attention vision ", 0), 0u) << plain;
}

// Every row says how much memory its steps took; --find_max_batch measures the largest micro-batch within a budget,
// without and with gradient checkpointing: here every batch up to the data's rows fits in 8 GB, none in 10 MB.
TEST(BenchCli, RowsReportMemoryAndFindMaxBatchBracketsTheAnswer) {
  const fs::path dir = fs::temp_directory_path() / "bt_bench_cli_memory";
  fs::remove_all(dir);
  int rc = -1;
  const auto rows = run_bench(dir, {}, &rc);
  ASSERT_EQ(rc, 0) << bt::test::slurp(dir.string() + ".log");
  for (const auto& row : rows["rows"]) {
    EXPECT_GT(row["peak_memory_bytes"].get<uint64_t>(), 20u << 20) << row;  // libtorch alone is more
    EXPECT_LT(row["step_memory_bytes"].get<uint64_t>(), row["peak_memory_bytes"].get<uint64_t>()) << row;
  }
  const auto fit_json = [&](const char* gb) {
    return run_json({"bench", "--find_max_batch", "--max_memory_gb", gb, "--synth_n", "6", "--synth_max_width", "120",
                     "--torch_threads", "1", "--output_dir", dir.string()},
                    dir.string() + ".fit.log", dir / "find_max_batch.json", &rc);
  };
  auto j = fit_json("8");
  ASSERT_EQ(rc, 0) << bt::test::slurp(dir.string() + ".fit.log");
  ASSERT_EQ(j["modes"].size(), 2u);
  EXPECT_FALSE(j["modes"][0]["gradient_checkpointing"].get<bool>());
  EXPECT_TRUE(j["modes"][1]["gradient_checkpointing"].get<bool>());
  for (const auto& m : j["modes"]) {
    EXPECT_EQ(m["largest_micro_batch"], 6) << m;
    EXPECT_NE(m["bound"].get<std::string>().find("the data has 6 rows"), std::string::npos) << m;
    EXPECT_GT(m["peak_memory_bytes"].get<uint64_t>(), 0u);
  }
  j = fit_json("0.01");
  ASSERT_EQ(rc, 0) << bt::test::slurp(dir.string() + ".fit.log");
  EXPECT_EQ(j["modes"][0]["largest_micro_batch"], 0);
  EXPECT_EQ(j["modes"][0]["bound"], "2 does not fit");
}

// Issue 57: bench measures a user's own setup: their checkpoint (--model_name_or_path, here with --tokenizer_name)
// on their data, where one unreadable image no longer fails every configuration under --on_bad_sample skip.
TEST(BenchCli, MeasuresTheUsersModelOnDataWithABadImage) {
  const fs::path dir = fs::temp_directory_path() / "bt_bench_cli_own";
  fs::remove_all(dir);
  bt::data::SynthOptions so;
  so.n = 8, so.images = 8, so.seed = 5, so.min_width = 64, so.max_width = 96, so.threads = 1;
  bt::data::write_synth((dir / "data").string(), so);
  fs::path bad;
  for (const auto& e : fs::directory_iterator(dir / "data" / "images")) bad = e.path();
  std::ofstream(bad, std::ios::trunc) << "not an image";
  const fs::path model = dir / "model";
  fs::create_directories(model);
  for (const char* f : {"config.json", "model.safetensors"})
    fs::copy_file(fs::path(BT_TEXT_FIXTURES) / ".." / ".." / "fixtures" / "bridgetower-tiny" / f, model / f);
  const std::vector<std::string> own{"--data", (dir / "data").string(), "--model_name_or_path", model.string(),
                                     "--tokenizer_name", (fs::path(BT_TEXT_FIXTURES) / "tiny").string(),
                                     "--output_dir", (dir / "out").string()};
  int rc = -1;
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), own.begin(), own.end());
    return more;
  };
  auto j = run_bench(dir / "out", with({}), &rc);
  EXPECT_NE(rc, 0);  // the rows that read every image (in memory) meet the bad one and fail
  ASSERT_TRUE(j.is_object()) << bt::test::slurp((dir / "out").string() + ".log");
  ASSERT_FALSE(j["errors"].empty());
  EXPECT_NE(j["errors"][0].get<std::string>().find(bad.filename().string() + "): not an image file"),
            std::string::npos) << j["errors"];
  j = run_bench(dir / "out", with({"--on_bad_sample", "skip"}), &rc);
  ASSERT_EQ(rc, 0) << bt::test::slurp((dir / "out").string() + ".log");
  EXPECT_EQ(j["rows"].size(), 3u);
  EXPECT_NE(j["title"].get<std::string>().find(model.string()), std::string::npos) << j["title"];
  EXPECT_TRUE(j["errors"].empty());
  fs::remove_all(dir);
}

// What clusters and long runs do to a training run (issue 42): preemption (SIGTERM: the step finishes, is saved,
// the exit status says so, `latest_or_none` resumes it), a closed stdout, divergence (non-finite steps are never
// applied; a few in a row stop the run with one line, and nothing non-finite is written), damaged checkpoints (the
// manifest's sizes and checksums: the newest intact one is resumed) and checkpoints of another run (another model,
// text length or dataset: refused with the reason).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <nlohmann/json.hpp>

#include "data/synth.h"
#include "report/run_log.h"
#include "run_bridgetune.h"
#include "train/checkpoint_dir.h"

namespace fs = std::filesystem;

namespace {

class Faults : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_faults_" + std::to_string(getpid()));
    fs::remove_all(root_);
    bt::data::SynthOptions so;
    so.n = 48, so.images = 16, so.seed = 5, so.min_width = 96, so.max_width = 128, so.threads = 2;
    bt::data::write_synth((root_ / "data").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static std::vector<std::string> args(const fs::path& out, int steps, const std::string& lr = "1e-3") {
    return {"train", "--train_file", (root_ / "data").string(), "--output_dir", out.string(), "--image_size", "32",
            "--per_device_train_batch_size", "8", "--max_steps", std::to_string(steps), "--logging_steps", "1",
            "--learning_rate", lr, "--torch_threads", "1", "--dataloader_num_workers", "1"};
  }
  static size_t records(const fs::path& out) {
    std::error_code ec;
    return fs::exists(out / "metrics.jsonl", ec) ? bt::report::read_window_records(out / "metrics.jsonl").size() : 0;
  }
  static int train(std::vector<std::string> a, std::initializer_list<std::string> more, const fs::path& log) {
    a.insert(a.end(), more);
    return bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, log));
  }
  static inline fs::path root_;
};

TEST_F(Faults, SigtermSavesTheStepItFinishedAndLatestOrNoneResumesIt) {
  const fs::path out = root_ / "preempted", log = root_ / "preempted.log";
  std::vector<std::string> a = args(out, 100000);  // far more than the test waits for
  a.insert(a.end(), {"--resume_from_checkpoint", "latest_or_none"});  // the requeue script's first run
  const pid_t pid = bt::test::spawn_bridgetune(a, log);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (records(out) < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_GE(records(out), 3u) << bt::test::slurp(log);
  kill(pid, SIGTERM);
  EXPECT_EQ(bt::test::wait_exit_code(pid), 128 + SIGTERM);
  const std::string text = bt::test::slurp(log);
  EXPECT_NE(text.find("no checkpoint in " + out.string() + " yet: starting from scratch"), std::string::npos) << text;
  const size_t at = text.find("stopped by SIGTERM after step ");
  ASSERT_NE(at, std::string::npos) << text;
  const int64_t step = std::stoll(text.substr(at + 30));
  EXPECT_TRUE(fs::is_directory(out / ("checkpoint-" + std::to_string(step)))) << text;
  EXPECT_FALSE(fs::exists(out / "train_results.json"));  // stopped, not finished
  // The same command (the requeue) resumes that step and finishes.
  a = args(out, int(step) + 2);
  a.insert(a.end(), {"--resume_from_checkpoint", "latest_or_none"});
  EXPECT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, root_ / "requeued.log")), 0)
      << bt::test::slurp(root_ / "requeued.log");
  EXPECT_NE(bt::test::slurp(root_ / "requeued.log").find("at step " + std::to_string(step)), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "train_results.json"));
}

// Signals at moments drawn at random (seeded), with a checkpoint every step so that many land during a save, and
// in every other round the same signal again soon after (what a launcher forwarding it to a signalled process group
// does: the same request, still a graceful stop): every round saves its step and exits 128 + SIGTERM, every
// checkpoint listed is intact (manifest, state file), and the requeued command resumes the newest and finishes.
// (A second signal after kSameRequestSeconds stops at once: train.StopSignal.*.)
TEST_F(Faults, SignalsAtAnyMomentLeaveOnlyIntactCheckpoints) {
  const fs::path out = root_ / "signals";
  std::mt19937 rng(42);
  std::vector<std::string> a = args(out, 100000);
  a.insert(a.end(), {"--save_steps", "1", "--save_total_limit", "2", "--resume_from_checkpoint", "latest_or_none"});
  for (int round = 0; round < 4; ++round) {
    const fs::path log = root_ / ("signals." + std::to_string(round) + ".log");
    const size_t before = records(out);
    const pid_t pid = bt::test::spawn_bridgetune(a, log);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (records(out) < before + 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 300));
    kill(pid, SIGTERM);
    if (round % 2 == 1) {  // within kSameRequestSeconds: the same request (a launcher forwarding it), not a second
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 60));
      kill(pid, SIGTERM);
    }
    EXPECT_EQ(bt::test::wait_exit_code(pid), 128 + SIGTERM) << bt::test::slurp(log);
    EXPECT_NE(bt::test::slurp(log).find("stopped by SIGTERM after step "), std::string::npos) << bt::test::slurp(log);
    const auto listed = bt::train::list_checkpoints(out);
    ASSERT_FALSE(listed.empty()) << bt::test::slurp(log);
    for (const auto& c : listed) EXPECT_EQ(bt::train::checkpoint_problem(c.path), "") << "round " << round;
  }
  const int64_t last = bt::train::list_checkpoints(out).back().step;
  a = args(out, int(last) + 1);
  a.insert(a.end(), {"--save_steps", "1", "--resume_from_checkpoint", "latest_or_none"});
  const fs::path log = root_ / "signals.requeued.log";
  EXPECT_EQ(train(a, {}, log), 0) << bt::test::slurp(log);
  EXPECT_NE(bt::test::slurp(log).find("at step " + std::to_string(last)), std::string::npos) << bt::test::slurp(log);
}

TEST_F(Faults, AClosedStdoutDoesNotEndTheRun) {
  const fs::path out = root_ / "piped";
  std::string cmd = std::string(BT_BRIDGETUNE_EXE);
  for (const auto& s : args(out, 12)) cmd += " '" + s + "'";
  // head exits after one line: every later write of bridgetune's meets a closed pipe.
  cmd = "bash -c \"" + cmd + " 2>&1 | head -n 1 >/dev/null; exit \\${PIPESTATUS[0]}\"";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_TRUE(fs::exists(out / "train_results.json"));
}

// --learning_rate 1e6: the loss is NaN from step 2. No NaN step is applied or saved, the run stops after
// --max_nonfinite_steps of them with one line, every file it wrote parses (no NaN in JSON), and no final model.
TEST_F(Faults, DivergenceStopsWithOneLineAndWritesNothingNonFinite) {
  const fs::path out = root_ / "diverged", log = root_ / "diverged.log";
  std::vector<std::string> a = args(out, 30, "1e6");
  a.insert(a.end(), {"--save_steps", "1", "--max_nonfinite_steps", "2"});
  EXPECT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, log)), 1);
  const std::string text = bt::test::slurp(log);
  EXPECT_NE(text.find("error: training diverged: 2 steps in a row"), std::string::npos) << text;
  EXPECT_NE(text.find("--learning_rate 1e+06 is too high"), std::string::npos) << text;
  EXPECT_NE(text.find("not finite, skipped (the weights are unchanged; 1 in a row"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out / "model.safetensors"));
  EXPECT_FALSE(fs::exists(out / "train_results.json"));
  for (const auto& r : bt::report::read_window_records(out / "metrics.jsonl")) EXPECT_TRUE(std::isfinite(r.loss));
  // Checkpoints only of steps with a finite loss: step 1's (the loss is NaN from step 2 on).
  EXPECT_TRUE(fs::is_directory(out / "checkpoint-1")) << text;
  EXPECT_FALSE(fs::exists(out / "checkpoint-2")) << text;
  // That checkpoint's loss was finite but its weights blew up: resumed at a sane rate it fails from its first
  // step, and the line blames the checkpoint, not the rate.
  a = args(out, 30, "1e-4");
  a.insert(a.end(), {"--max_nonfinite_steps", "2", "--resume_from_checkpoint", "latest"});
  EXPECT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, root_ / "diverged_resumed.log")), 1);
  const std::string resumed = bt::test::slurp(root_ / "diverged_resumed.log");
  EXPECT_NE(resumed.find("Likely cause: the checkpoint resumed, " + (out / "checkpoint-1").string() + ", diverged already"),
            std::string::npos) << resumed;
}

// One NaN step (injected into the gradients of step 3): skipped and counted, the weights untouched, and the run
// recovers: it ends normally, with every logged loss finite and the step in metrics.jsonl's nonfinite count.
TEST_F(Faults, ASingleNonFiniteStepIsSkippedAndTheRunGoesOn) {
  const fs::path out = root_ / "one_nan", log = root_ / "one_nan.log";
  ASSERT_EQ(train(args(out, 6), {"--test_inject_nonfinite_at_step", "3"}, log), 0) << bt::test::slurp(log);
  EXPECT_NE(bt::test::slurp(log).find("not finite, skipped (the weights are unchanged; 1 in a row"), std::string::npos)
      << bt::test::slurp(log);
  const auto recs = bt::report::read_window_records(out / "metrics.jsonl");
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs.back().nonfinite_steps, 1);
  for (const auto& r : recs) EXPECT_TRUE(std::isfinite(r.loss));
  EXPECT_TRUE(fs::exists(out / "model.safetensors"));
}

// A truncated optimizer file in the newest checkpoint, 64 KiB of 0xFF inside the next one's weights (its header
// intact) and a missing optimizer file in the next: `latest` skips all three, naming why, and resumes the newest intact checkpoint; naming a damaged one is an error.
TEST_F(Faults, DamagedCheckpointsAreSkippedForTheNewestIntactOne) {
  const fs::path out = root_ / "damaged";
  ASSERT_EQ(train(args(out, 8), {"--save_steps", "2"}, root_ / "damaged.log"), 0) << bt::test::slurp(root_ / "damaged.log");
  fs::resize_file(out / "checkpoint-8" / "optimizer.safetensors", fs::file_size(out / "checkpoint-8" / "optimizer.safetensors") / 2);
  {
    std::fstream f(out / "checkpoint-6" / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(out / "checkpoint-6" / "model.safetensors") / 2));
    const std::string ff(64 << 10, '\xff');
    f.write(ff.data(), static_cast<std::streamsize>(ff.size()));
  }
  fs::remove(out / "checkpoint-4" / "optimizer.safetensors");
  const fs::path log = root_ / "damaged_resume.log";
  ASSERT_EQ(train(args(out, 10), {"--save_steps", "2", "--resume_from_checkpoint", "latest"}, log), 0)
      << bt::test::slurp(log);
  const std::string text = bt::test::slurp(log);
  EXPECT_NE(text.find("checkpoint-8/optimizer.safetensors: "), std::string::npos) << text;  // truncated
  EXPECT_NE(text.find("checkpoint-6/model.safetensors: its checksum differs from the manifest (damaged)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("checkpoint-4/optimizer.safetensors: missing"), std::string::npos) << text;
  EXPECT_NE(text.find("resumed from " + (out / "checkpoint-2").string() + " at step 2"), std::string::npos) << text;
  // Named explicitly, a damaged checkpoint is refused with the reason.
  fs::remove(out / "checkpoint-10" / "tokenizer.json");
  fs::remove(out / "checkpoint-10" / "vocab.json");
  const fs::path named = root_ / "damaged_named.log";
  EXPECT_EQ(train(args(out, 12), {"--resume_from_checkpoint", (out / "checkpoint-10").string()}, named), 1);
  EXPECT_NE(bt::test::slurp(named).find("missing (the manifest lists it)"), std::string::npos) << bt::test::slurp(named);
}

// Another --model_preset, --max_seq_length or dataset than the checkpoint's: refused, naming both values; other
// data is accepted with --resume_with_changed_data, which says so.
TEST_F(Faults, ACheckpointOfAnotherRunIsRefused) {
  const fs::path out = root_ / "identity";
  ASSERT_EQ(train(args(out, 2), {"--save_steps", "2"}, root_ / "identity.log"), 0) << bt::test::slurp(root_ / "identity.log");
  auto refused = [&](std::initializer_list<std::string> more, const std::string& why) {
    const fs::path log = root_ / "identity_refused.log";
    std::vector<std::string> a = args(out, 4);
    a.insert(a.end(), more);
    a.insert(a.end(), {"--resume_from_checkpoint", "latest"});
    EXPECT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, log)), 1) << why;
    EXPECT_NE(bt::test::slurp(log).find(why), std::string::npos) << bt::test::slurp(log);
  };
  refused({"--model_preset", "small"}, "made with the model \"--model_preset tiny\", this run has \"--model_preset small\"");
  refused({"--max_seq_length", "64"}, "made with --max_seq_length 128, this run has 64");
  // --tokenizer_name beside a resume: the checkpoint's own tokenizer (a copy) is accepted below, another (one merge
  // fewer, the same vocabulary) is refused.
  const fs::path same_tok = root_ / "same_tok", other_tok = root_ / "other_tok";
  for (const fs::path& d : {same_tok, other_tok}) {
    fs::create_directories(d);
    for (const char* f : {"vocab.json", "merges.txt"})
      fs::copy_file(out / "checkpoint-2" / f, d / f, fs::copy_options::overwrite_existing);
  }
  std::string merges = bt::test::slurp(other_tok / "merges.txt");
  merges.erase(merges.find_last_of('\n', merges.size() - 2) + 1);
  std::ofstream(other_tok / "merges.txt", std::ios::trunc) << merges;
  refused({"--tokenizer_name", other_tok.string()}, "made with another tokenizer than --tokenizer_name");
  refused({"--dedupe_images_in_batch", "false"}, "made with --dedupe_images_in_batch true, this run has false");
  // The same captions with the images shuffled among the rows is other data.
  const fs::path shuffled = root_ / "shuffled";
  fs::create_directories(shuffled);
  fs::create_directory_symlink(root_ / "data" / "images", shuffled / "images");
  {
    std::ifstream in(root_ / "data" / "captions.jsonl");
    std::vector<nlohmann::json> rows;
    for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
    std::ofstream o(shuffled / "captions.jsonl");
    for (size_t i = 0; i < rows.size(); ++i) {
      nlohmann::json row = rows[i];
      row["image"] = rows[(i + 1) % rows.size()]["image"];
      o << row.dump() << "\n";
    }
  }
  std::vector<std::string> moved = args(out, 4);
  moved[2] = shuffled.string();
  EXPECT_EQ(train(moved, {"--resume_from_checkpoint", "latest"}, root_ / "identity_shuffled.log"), 1);
  EXPECT_NE(bt::test::slurp(root_ / "identity_shuffled.log").find("it was made on other data"), std::string::npos)
      << bt::test::slurp(root_ / "identity_shuffled.log");
  bt::data::SynthOptions so;
  so.n = 40, so.images = 10, so.seed = 9, so.min_width = 96, so.max_width = 128, so.threads = 2;
  bt::data::write_synth((root_ / "other").string(), so);
  std::vector<std::string> other = args(out, 4);
  other[2] = (root_ / "other").string();  // --train_file
  const fs::path log = root_ / "identity_other.log";
  EXPECT_EQ(train(other, {"--resume_from_checkpoint", "latest"}, log), 1);
  EXPECT_NE(bt::test::slurp(log).find("it was made on other data (48 rows"), std::string::npos) << bt::test::slurp(log);
  EXPECT_NE(bt::test::slurp(log).find("--resume_with_changed_data"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(out / "checkpoint-2"));  // nothing of the refused runs touched the folder
  EXPECT_FALSE(fs::exists(out / "checkpoint-4"));
  EXPECT_EQ(train(other, {"--resume_from_checkpoint", "latest", "--resume_with_changed_data", "--tokenizer_name",
                          same_tok.string()}, log), 0)
      << bt::test::slurp(log);
  EXPECT_NE(bt::test::slurp(log).find("note: --resume_with_changed_data: resuming"), std::string::npos);
}

// --on_bad_sample skip: every skipped sample is counted in the progress line, metrics.jsonl and train_results.json,
// with the first reasons; a missing image's reason names the path that was tried.
TEST_F(Faults, SkippedSamplesAreCountedEverywhere) {
  const fs::path data = root_ / "holes", out = root_ / "holes_out", log = root_ / "holes.log";
  fs::create_directories(data);
  fs::copy(root_ / "data", data, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  std::vector<fs::path> images;
  for (const auto& e : fs::directory_iterator(data / "images")) images.push_back(e.path());
  std::sort(images.begin(), images.end());
  ASSERT_GE(images.size(), 2u);
  fs::remove(images[0]);  // its rows: a missing file, each time one is drawn
  std::vector<std::string> a = args(out, 6);
  a[2] = data.string();
  ASSERT_EQ(train(a, {"--on_bad_sample", "skip"}, log), 0) << bt::test::slurp(log);
  const std::string text = bt::test::slurp(log);
  EXPECT_NE(text.find(" bad samples skipped"), std::string::npos) << text;
  const auto recs = bt::report::read_window_records(out / "metrics.jsonl");
  ASSERT_FALSE(recs.empty());
  EXPECT_GT(recs.back().skipped_samples, 0);
  const std::string results = bt::test::slurp(out / "train_results.json");
  EXPECT_NE(results.find("\"skipped_samples\": " + std::to_string(recs.back().skipped_samples)), std::string::npos)
      << results;
  EXPECT_NE(results.find("(looked for " + images[0].string() + ")"), std::string::npos) << results;
  // Stopped half-way and resumed, the run counts on from its checkpoint: the same total as in one go.
  const fs::path halves = root_ / "holes_halves";
  std::vector<std::string> half = args(halves, 3);
  half[2] = data.string();
  ASSERT_EQ(train(half, {"--on_bad_sample", "skip", "--save_steps", "3"}, root_ / "holes_half.log"), 0);
  half = args(halves, 6);
  half[2] = data.string();
  ASSERT_EQ(train(half, {"--on_bad_sample", "skip", "--resume_from_checkpoint", "latest"}, root_ / "holes_rest.log"), 0)
      << bt::test::slurp(root_ / "holes_rest.log");
  EXPECT_EQ(bt::report::read_window_records(halves / "metrics.jsonl").back().skipped_samples, recs.back().skipped_samples);
  EXPECT_NE(bt::test::slurp(halves / "train_results.json").find("\"skipped_samples\": " +
                                                                std::to_string(recs.back().skipped_samples)),
            std::string::npos) << bt::test::slurp(halves / "train_results.json");
}

// A JPEG libjpeg warns about ("Corrupt JPEG data: 4 extraneous bytes before marker 0xdb") is decoded, as Pillow
// decodes it, under the default --on_bad_sample error; train_results.json counts such images (0 in a clean run).
TEST_F(Faults, ImagesDecodedWithWarningsAreReportedNotFatal) {
  const fs::path data = root_ / "warned", out = root_ / "warned_out", log = root_ / "warned.log";
  fs::create_directories(data);
  fs::copy(root_ / "data", data, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  std::vector<fs::path> images;
  for (const auto& e : fs::directory_iterator(data / "images")) images.push_back(e.path());
  std::sort(images.begin(), images.end());
  ASSERT_FALSE(images.empty());
  std::string jpeg = bt::test::slurp(images[0]);
  const size_t dqt = jpeg.find("\xFF\xDB");
  ASSERT_NE(dqt, std::string::npos);
  jpeg.insert(dqt, "\x12\x12\x12\x12");
  std::ofstream(images[0], std::ios::binary) << jpeg;
  size_t rows = 0;  // the rows naming that image: one epoch of 48 rows is 6 steps of 8, each row decoded once
  std::ifstream captions(data / "captions.jsonl");
  for (std::string line; std::getline(captions, line);)
    rows += nlohmann::json::parse(line)["image"] == "images/" + images[0].filename().string();
  ASSERT_GT(rows, 0u);
  std::vector<std::string> a = args(out, 6);
  a[2] = data.string();
  ASSERT_EQ(train(a, {"--decoded_cache_mb", "0"}, log), 0) << bt::test::slurp(log);
  const auto results = nlohmann::json::parse(bt::test::slurp(out / "train_results.json"));
  EXPECT_EQ(results.value("images_decoded_with_warnings", int64_t{-1}), int64_t(rows)) << results.dump();
  EXPECT_EQ(results.value("skipped_samples", int64_t{-1}), 0);
  // With the decoded cache (on for the default transform, an eval one) the image is decoded, and counted, once.
  std::vector<std::string> cached = args(root_ / "warned_cached", 6);
  cached[2] = data.string();
  ASSERT_EQ(train(cached, {}, root_ / "warned_cached.log"), 0) << bt::test::slurp(root_ / "warned_cached.log");
  EXPECT_EQ(nlohmann::json::parse(bt::test::slurp(root_ / "warned_cached" / "train_results.json"))
                .value("images_decoded_with_warnings", int64_t{-1}), 1);
  const fs::path clean = root_ / "clean_out";
  ASSERT_EQ(train(args(clean, 2), {}, root_ / "clean.log"), 0) << bt::test::slurp(root_ / "clean.log");
  EXPECT_EQ(nlohmann::json::parse(bt::test::slurp(clean / "train_results.json")).value("images_decoded_with_warnings",
                                                                                      int64_t{-1}), 0);
}

}  // namespace

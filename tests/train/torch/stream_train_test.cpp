// `train --train_shards http://...` (issue 45): streamed shards train in bounded memory (train/torch/stream_train.h).
// The same shards served by a loopback HTTP server in this process (dropping a connection) train exactly as the local
// files streamed through `pipe:cat` (same losses, step for step), for any worker count; a run stopped at a checkpoint
// resumes from the saved stream position with the uninterrupted run's losses; without --max_steps, or with a URL
// that answers 404, the run stops with one line naming the fix or the URL.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "../../data/loopback_http.h"
#include "data/byte_stream.h"
#include "data/synth.h"
#include "report/run_log.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {

class StreamTrain : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_stream_train_" + std::to_string(getpid()));
    fs::remove_all(root_);
    bt::data::SynthOptions so;
    so.n = 32;
    so.seed = 3;
    so.min_width = 64, so.max_width = 96;
    so.threads = 2;
    so.tar = true;
    so.shard_size = 8;
    bt::data::write_synth((root_ / "shards").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static int train(const std::string& shards, const fs::path& out, std::string* log_text = nullptr,
                   std::vector<std::string> more = {}) {
    std::vector<std::string> args = {
        "train", "--train_shards", shards, "--output_dir", out.string(), "--model_preset", "tiny", "--image_size", "32",
        "--per_device_train_batch_size", "4", "--max_steps", "3", "--logging_steps", "1", "--torch_threads", "1",
        "--dataloader_num_workers", "1", "--dropout", "0"};
    args.insert(args.end(), more.begin(), more.end());
    const fs::path log = out.string() + ".log";
    int code = bt::test::wait_exit_code(bt::test::spawn_bridgetune(args, log));
    if (log_text) *log_text = bt::test::slurp(log);
    return code;
  }
  static std::vector<double> losses(const fs::path& out) {
    std::vector<double> l;
    for (const auto& r : bt::report::read_window_records(out / "metrics.jsonl")) l.push_back(r.loss);
    return l;
  }
  static inline fs::path root_;
};

TEST_F(StreamTrain, HttpShardsTrainAsTheLocalFiles) {
  if (!bt::data::have_http_streams()) GTEST_SKIP() << "this build has no libcurl";
  bt::data::testing::LoopbackHttp http((root_ / "shards").string() + "/");
  http.drop_after = 20000;  // the first transfer breaks and is resumed: the samples must not change
  http.drops_left = 1;
  std::string log;
  const std::string local = "pipe:cat " + (root_ / "shards" / "shard-{000000..000003}.tar").string();
  ASSERT_EQ(train(local, root_ / "local", &log, {"--dataloader_num_workers", "0"}), 0) << log;
  EXPECT_NE(log.find("image dedupe in batch and the decoded cache are off"), std::string::npos) << log;
  ASSERT_EQ(train(http.url("shard-{000000..000003}.tar"), root_ / "http", &log, {"--dataloader_num_workers", "3"}), 0)
      << log;
  const auto a = losses(root_ / "local"), b = losses(root_ / "http");
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6 * std::max(1.0, std::fabs(a[i]))) << i;
  EXPECT_GE(http.range_requests, 1);

  // Exact resume: stopped after step 2, resumed from its checkpoint by another server (another port), the run
  // ends with the uninterrupted run's losses.
  const fs::path cut = root_ / "cut";
  ASSERT_EQ(train(http.url("shard-{000000..000003}.tar"), cut, &log, {"--save_steps", "2", "--stop_after_step", "2"}), 0)
      << log;
  {
    bt::data::testing::LoopbackHttp other((root_ / "shards").string() + "/");
    ASSERT_EQ(train(other.url("shard-{000000..000003}.tar"), cut, &log, {"--resume_from_checkpoint", "latest"}), 0)
        << log;
  }
  const auto c = losses(cut);
  ASSERT_EQ(c.size(), a.size()) << log;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(c[i], a[i], 1e-6 * std::max(1.0, std::fabs(a[i]))) << i;
  EXPECT_NE(bt::test::slurp(cut / "checkpoint-2" / "bridgetune_state.json").find("stream_cursor"), std::string::npos);
  EXPECT_EQ(log.find("reading their first"), std::string::npos) << log;  // the saved position, not a re-read

  std::vector<std::string> no_steps = {"train", "--train_shards", local, "--output_dir", (root_ / "endless").string(),
                                       "--model_preset", "tiny", "--per_device_train_batch_size", "4"};
  EXPECT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(no_steps, root_ / "endless.log")), 1);
  EXPECT_NE(bt::test::slurp(root_ / "endless.log").find("give --max_steps"), std::string::npos);
  no_steps.insert(no_steps.end(), {"--max_steps", "2", "--max_train_samples", "8"});
  EXPECT_EQ(bt::test::wait_exit_code(bt::test::spawn_bridgetune(no_steps, root_ / "endless.log")), 1);
  EXPECT_NE(bt::test::slurp(root_ / "endless.log").find("--max_train_samples is not supported"), std::string::npos);

  const std::string missing = http.url("shard-000009.tar");
  EXPECT_EQ(train(missing, root_ / "missing", &log), 1);
  EXPECT_NE(log.find(missing + ": HTTP 404"), std::string::npos) << log;
}

// Issue 57: the progress line of streamed shards tells what is known: the samples the run reads (not "rows"), the
// epoch as a fraction once the stream has passed an epoch's end (its length unknown before: said so), and with
// per-part rates the rates the groups use, not a base rate none of them trains at.
TEST_F(StreamTrain, TheProgressLineSaysWhatIsKnown) {
  std::string log;
  const fs::path out = root_ / "progress";
  const std::string local = "pipe:cat " + (root_ / "shards" / "shard-{000000..000003}.tar").string();
  ASSERT_EQ(train(local, out, &log, {"--max_steps", "10", "--dataloader_num_workers", "0", "--learning_rate", "1e-4",
                                      "--vision_learning_rate", "2e-4", "--text_learning_rate", "3e-4",
                                      "--cross_modal_learning_rate", "5e-5"}),
            0)
      << log;
  EXPECT_NE(log.find("on streamed shards (40 samples over the run)"), std::string::npos) << log;
  EXPECT_NE(log.find("| epoch 0 (its length not known yet: 4 samples read)"), std::string::npos) << log;
  EXPECT_NE(log.find("| lr vision "), std::string::npos) << log;
  EXPECT_EQ(log.find("| lr 1."), std::string::npos) << log;  // --learning_rate's 1e-4 trains no group here
  const auto records = bt::report::read_window_records(out / "metrics.jsonl");
  ASSERT_EQ(records.size(), 10u);
  EXPECT_NEAR(records.back().epoch, 40.0 / 32.0, 1e-9);  // 32 samples an epoch (4 shards of 8), 40 read
}

}  // namespace

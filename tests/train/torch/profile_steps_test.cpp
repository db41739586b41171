// Issue 46's CPU-testable step hooks end to end: --profile_steps writes a chrome trace naming aten ops, a bad range
// is one line, and train_results.json records the attention backend per tower in op_paths.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "data/synth.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {

class ProfileSteps : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_profile_steps_" + std::to_string(getpid()));
    fs::remove_all(root_);
    bt::data::SynthOptions so;
    so.n = 16, so.images = 8, so.seed = 5, so.min_width = 64, so.max_width = 96, so.threads = 1;
    bt::data::write_synth((root_ / "data").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  static int train(const fs::path& out, std::initializer_list<std::string> more) {
    std::vector<std::string> a{"train", "--train_file", (root_ / "data").string(), "--output_dir", out.string(),
                               "--image_size", "32", "--per_device_train_batch_size", "4", "--max_steps", "3",
                               "--torch_threads", "1", "--dataloader_num_workers", "1", "--eval_steps", "0",
                               "--throughput_warmup_steps", "1"};
    a.insert(a.end(), more);
    return bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, root_ / (out.filename().string() + ".log")));
  }
  static inline fs::path root_;
};

TEST_F(ProfileSteps, WritesAChromeTraceOfTheRangeAndRecordsAttention) {
  const fs::path out = root_ / "run";
  ASSERT_EQ(train(out, {"--profile_steps", "2:3"}), 0) << bt::test::slurp(root_ / "run.log");
  const fs::path trace = out / "profile_steps_2-3.json";
  ASSERT_TRUE(fs::exists(trace)) << bt::test::slurp(root_ / "run.log");
  const std::string t = bt::test::slurp(trace);
  EXPECT_NE(t.find("aten::"), std::string::npos) << t.substr(0, 400);
  EXPECT_TRUE(nlohmann::json::accept(t)) << "not JSON: " << t.substr(0, 400);
  const auto results = nlohmann::json::parse(bt::test::slurp(out / "train_results.json"));
  EXPECT_NE(results.value("op_paths", "").find("attention vision "), std::string::npos) << results.dump();
}

TEST_F(ProfileSteps, BadRangeIsOneLine) {
  const fs::path out = root_ / "bad";
  EXPECT_NE(train(out, {"--profile_steps", "3:2"}), 0);
  EXPECT_NE(bt::test::slurp(root_ / "bad.log").find("--profile_steps '3:2'"), std::string::npos)
      << bt::test::slurp(root_ / "bad.log");
}

}  // namespace

// `bridgetune train` over several --train_file (issue 45, mixing): the run prints the mix, plans its steps from the
// mixed epoch, records the mix in training_args.json and its checkpoints, resumes exactly with the same mix (given
// as a comma list this time) and refuses a checkpoint made with another mix.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "data/synth.h"
#include "report/run_log.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {

class TrainMix : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_train_mix_" + std::to_string(getpid()));
    fs::remove_all(root_);
    bt::data::SynthOptions so;
    so.n = 12, so.images = 6, so.seed = 3, so.min_width = 64, so.max_width = 80, so.threads = 2;
    bt::data::write_synth((root_ / "a").string(), so);
    so.n = 8, so.images = 4, so.seed = 4;
    bt::data::write_synth((root_ / "b").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static int train(std::vector<std::string> files, const std::string& out, std::initializer_list<std::string> more,
                   const fs::path& log) {
    std::vector<std::string> a{"train"};
    for (const std::string& f : files) a.insert(a.end(), {"--train_file", f});
    a.insert(a.end(), {"--output_dir", (root_ / out).string(), "--image_size", "32", "--per_device_train_batch_size",
                       "4", "--max_steps", "6", "--save_steps", "2", "--logging_steps", "1", "--learning_rate", "1e-3",
                       "--torch_threads", "1", "--dataloader_num_workers", "1"});
    a.insert(a.end(), more);
    return bt::test::wait_exit_code(bt::test::spawn_bridgetune(a, log));
  }
  static std::vector<double> losses(const std::string& out) {
    std::vector<double> l;
    for (const auto& r : bt::report::read_window_records(root_ / out / "metrics.jsonl")) l.push_back(r.loss);
    return l;
  }
  static nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(bt::test::slurp(p)); }
  static inline fs::path root_;
};

// Interrupted after step 2 and resumed (past the mixed epoch's end: 2-4 steps an epoch): the uninterrupted run's
// losses exactly.
TEST_F(TrainMix, TwoTrainFilesTrainResumeExactlyAndAnotherMixIsRefused) {
  const std::string a = (root_ / "a").string(), b = (root_ / "b").string();
  const fs::path log = root_ / "mix.log";
  ASSERT_EQ(train({a, b}, "ref", {"--train_mix_weights", "0.7,0.3"}, log), 0) << bt::test::slurp(log);
  const std::string out = bt::test::slurp(log);
  std::smatch m;
  const std::string line = "mixing 2 datasets: " + a + " 0.7 \\(12 rows\\), " + b +
                           " 0.3 \\(8 rows\\), first_exhausted: epoch = ([0-9]+) rows";
  ASSERT_TRUE(std::regex_search(out, m, std::regex(line))) << out;
  const long epoch_rows = std::stol(m[1]);
  EXPECT_GE(epoch_rows, 8);  // the draws up to the first exhaustion: at least that dataset's rows, at most all
  EXPECT_LE(epoch_rows, 19);  // rows but the last of the other
  // The step plan is the mixed epoch's: floor(epoch rows / batch 4) steps an epoch.
  const nlohmann::json state = read_json(root_ / "ref" / "checkpoint-2" / "bridgetune_state.json");
  EXPECT_EQ(state["settings"]["steps_per_epoch"], epoch_rows / 4) << state["settings"].dump();
  EXPECT_EQ(state["settings"]["train_mix"], "2 datasets (12 rows, 8 rows), weights 0.7,0.3, first_exhausted");
  const nlohmann::json args = read_json(root_ / "ref" / "training_args.json");
  EXPECT_EQ(args["train_file"], nlohmann::json({a, b}));
  EXPECT_EQ(args["train_mix_weights"], nlohmann::json({0.7, 0.3}));
  EXPECT_EQ(args["train_mix_stopping"], "first_exhausted");
  const std::vector<double> ref = losses("ref");
  ASSERT_EQ(ref.size(), 6u);

  const fs::path part = root_ / "part.log";
  ASSERT_EQ(train({a, b}, "out", {"--train_mix_weights", "0.7,0.3", "--stop_after_step", "2"}, part), 0)
      << bt::test::slurp(part);
  // Another stopping strategy: other data, refused before anything is written.
  const fs::path refused = root_ / "refused.log";
  EXPECT_EQ(train({a, b}, "out", {"--train_mix_weights", "0.7,0.3", "--train_mix_stopping", "all_exhausted",
                                  "--resume_from_checkpoint", "latest"}, refused), 1);
  EXPECT_NE(bt::test::slurp(refused).find("it was made on other data"), std::string::npos) << bt::test::slurp(refused);
  EXPECT_NE(bt::test::slurp(refused).find("mix 2 datasets (12 rows, 8 rows), weights 0.7,0.3, all_exhausted"),
            std::string::npos) << bt::test::slurp(refused);
  EXPECT_FALSE(fs::exists(root_ / "out" / "checkpoint-4"));
  // The same mix as a comma list resumes, and continues exactly.
  const fs::path resumed = root_ / "resumed.log";
  EXPECT_EQ(train({a + "," + b}, "out", {"--train_mix_weights", "7,3", "--resume_from_checkpoint", "latest"},
                  resumed), 0) << bt::test::slurp(resumed);
  const std::vector<double> got = losses("out");
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_DOUBLE_EQ(got[i], ref[i]) << "step " << i + 1;
  // Weights without several files: one line naming the flag.
  const fs::path lone = root_ / "lone.log";
  EXPECT_EQ(train({a}, "lone", {"--train_mix_weights", "1"}, lone), 1);
  EXPECT_NE(bt::test::slurp(lone).find("--train_mix_weights needs several --train_file"), std::string::npos)
      << bt::test::slurp(lone);
}

}  // namespace

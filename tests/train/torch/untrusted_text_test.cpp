// Issue 53 through `bridgetune train`: text that comes from outside the command line -- a folder name, an
// environment switch, a checkpoint's recorded settings and arguments -- reaches the terminal escaped, and a pipe:
// command recorded in a checkpoint (its training_args.json, its settings) is never run by a resume.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "data/synth.h"
#include "report/run_log.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {

class UntrustedText : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_untrusted_text_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    bt::data::SynthOptions so;
    so.n = 16, so.images = 8, so.seed = 3, so.min_width = 64, so.max_width = 96, so.threads = 2;
    bt::data::write_synth((root_ / "data").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static std::vector<std::string> base(const fs::path& out, int steps) {
    return {"train", "--train_file", (root_ / "data").string(), "--output_dir", out.string(), "--image_size", "32",
            "--per_device_train_batch_size", "8", "--max_steps", std::to_string(steps), "--logging_steps", "1",
            "--torch_threads", "1", "--dataloader_num_workers", "1", "--save_steps", "1"};
  }
  // The run's exit code; its stdout and stderr in `log_`.
  int run(std::vector<std::string> args, std::initializer_list<std::string> more, const std::string& name) {
    args.insert(args.end(), more);
    const fs::path log = root_ / (name + ".log");
    const int code = bt::test::wait_exit_code(bt::test::spawn_bridgetune(args, log));
    log_ = bt::test::slurp(log);
    return code;
  }
  static bool has_raw_control_bytes(const std::string& s) {
    for (unsigned char c : s)
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return true;
    return false;
  }

  static inline fs::path root_;
  std::string log_;
};

TEST_F(UntrustedText, AFolderNameAndASwitchValueAreEscapedInEverythingPrinted) {
  const std::string title = "\x1b]0;pwned\x07\x1b[2J", shown = "\\x1b]0;pwned\\x07\\x1b[2J";
  const fs::path out = root_ / ("out" + title);
  setenv("BRIDGETUNE_CPU_GEMM", ("x" + title).c_str(), 1);  // the child inherits it
  const int code = run(base(out, 2), {}, "folder");
  unsetenv("BRIDGETUNE_CPU_GEMM");
  ASSERT_EQ(code, 0) << log_;
  EXPECT_FALSE(has_raw_control_bytes(log_)) << log_;
  EXPECT_NE(log_.find("BRIDGETUNE_CPU_GEMM=x" + shown + " is not one of"), std::string::npos) << log_;
  const std::string shown_out = (root_ / ("out" + shown)).string();
  EXPECT_NE(log_.find("outputs in " + shown_out + ":"), std::string::npos) << log_;  // the final summary
  EXPECT_NE(log_.find("HF Trainer files in " + shown_out + ": "), std::string::npos) << log_;
}

TEST_F(UntrustedText, AResumeRunsNoCommandItsCheckpointRecordsAndEscapesItsSettings) {
  const fs::path out = root_ / "resumed", canary = root_ / "canary";
  ASSERT_EQ(run(base(out, 2), {"--stop_after_step", "1"}, "first"), 0) << log_;
  const fs::path ck = out / "checkpoint-1";
  ASSERT_TRUE(fs::exists(ck)) << log_;
  // What a shared run folder could say: its arguments and its recorded settings naming commands, and its data's
  // identity holding control bytes.
  const std::string command = "pipe:touch " + canary.string();
  const nlohmann::json args = {{"train_file", command}, {"model_name_or_path", command},
                               {"validation_file", command}, {"tokenizer_name", command}};
  for (const fs::path& dir : {out, ck}) std::ofstream(dir / "training_args.json") << args.dump();
  const fs::path state_file = ck / "bridgetune_state.json";
  nlohmann::json state = bt::report::read_json_file(state_file);
  ASSERT_TRUE(state.contains("settings")) << state.dump();
  state["settings"]["train_mix_files"] = {command};
  state["settings"]["dataset"] = "rows \x1b]0;pwned\x07";
  std::ofstream(state_file, std::ios::trunc) << state.dump();

  ASSERT_EQ(run(base(out, 2), {"--resume_from_checkpoint", ck.string(), "--resume_with_changed_data"}, "resume"), 0)
      << log_;
  EXPECT_FALSE(fs::exists(canary)) << log_;
  EXPECT_NE(log_.find("(made on rows \\x1b]0;pwned\\x07"), std::string::npos) << log_;
  EXPECT_FALSE(has_raw_control_bytes(log_)) << log_;
}

}  // namespace

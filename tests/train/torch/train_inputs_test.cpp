// End-to-end tests of what `bridgetune train` (and evaluate, encode, search) make of their inputs (issue 57): no
// dead ends for a checkpoint without tokenizer files, the demo only when asked, usage errors in one line.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "data/synth.h"
#include "report/run_log.h"
#include "cli_result.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {

using Result = bt::test::CliResult;
using bt::test::slurp;
constexpr auto run = bt::test::run_cli;

class TrainInputsCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_train_inputs_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    setenv("XDG_CACHE_HOME", (root_ / "xdg_cache").c_str(), 1);  // the CPU peak cache: never the user's
    bt::data::SynthOptions so;
    so.n = 16, so.images = 8, so.seed = 3, so.min_width = 64, so.max_width = 96, so.threads = 2;
    bt::data::write_synth((root_ / "data").string(), so);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  // The tiny preset at 32 px, one torch thread, two steps.
  std::vector<std::string> base(const fs::path& out, int steps = 2) {
    return {"train", "--train_file", (root_ / "data").string(), "--output_dir", out.string(), "--image_size", "32",
            "--per_device_train_batch_size", "8", "--max_steps", std::to_string(steps), "--logging_steps", "1",
            "--learning_rate", "1e-3", "--torch_threads", "1", "--dataloader_num_workers", "0"};
  }
  static std::vector<std::string> with(std::vector<std::string> a, std::initializer_list<std::string> more) {
    a.insert(a.end(), more);
    return a;
  }
  static inline fs::path root_;
};

// Issue 57: the demo runs when asked (--demo, or `bridgetune train` with no flag at all: what `make demo` ran), never
// because a user naming their own model or output folder forgot the data flag.
TEST_F(TrainInputsCli, NoDataFlagIsTheDemoOnlyWhenAsked) {
  for (const auto& mine : {std::vector<std::string>{"--output_dir", (root_ / "mine").string()},
                           std::vector<std::string>{"--model_name_or_path", (root_ / "nope").string(), "--output_dir",
                                                    (root_ / "mine").string()}}) {
    std::vector<std::string> args{"train"};
    args.insert(args.end(), mine.begin(), mine.end());
    auto r = run(args, root_ / "no_data.log");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("error: no training data: give --train_file (or --train_shards, --dataset_name); --demo "
                         "trains on the built-in demo's generated cartoons instead"),
              std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("generating demo data"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(root_ / "mine"));
  }
  // `bridgetune train` alone starts the demo (in its default --output_dir, here under a folder of the test's).
  const fs::path cwd = root_ / "bare";
  fs::create_directories(cwd);
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::fopen((root_ / "bare.log").c_str(), "w");
    dup2(fileno(f), 1), dup2(fileno(f), 2);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    execl(BT_BRIDGETUNE_EXE, BT_BRIDGETUNE_EXE, "train", static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int status = 0;
  bool exited = false;
  while (!fs::exists(cwd / "runs" / "train" / "demo_data") && std::chrono::steady_clock::now() < deadline)
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  if (!exited) kill(pid, SIGKILL), waitpid(pid, &status, 0);
  EXPECT_TRUE(fs::exists(cwd / "runs" / "train" / "demo_data")) << slurp(root_ / "bare.log");
}

// Issue 57: every usage error in the project's one-line style with exit status 2, never CLI11's wording (rc 104,
// 108); errors of the run itself stay 1.
TEST_F(TrainInputsCli, UsageErrorsAreOneLineWithExitStatusTwo) {
  auto r = run({"train", "--learning_rate", "abc"}, root_ / "usage.log");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "error: --learning_rate abc: not a number (e.g. 0.5 or 5e-5) (bridgetune train --help lists its "
                   "flags)\n");
  r = run({"search", "--index", "x", "--query", "a", "--query_image", "b"}, root_ / "usage.log");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "error: give --query or --query_image, not both (bridgetune search --help lists its flags)\n");
  r = run({"train", "--on_bad_sample", "maybe"}, root_ / "usage.log");  // a word flag's own reader
  EXPECT_EQ(r.code, 2) << r.err;
  r = run({"train", "--no_such_flag"}, root_ / "usage.log");
  EXPECT_EQ(r.code, 2) << r.err;
  r = run({"evaluate", "--output_dir", "x"}, root_ / "usage.log");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: --model_name_or_path is required", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // --max_seq_length past the model's positions: refused before anything is written, naming the flag (issue 57).
  r = run(with(base(root_ / "too_long"), {"--max_seq_length", "600"}), root_ / "too_long.log");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("error: --max_seq_length 600: the model's text position embeddings hold at most 512 tokens"),
            std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "too_long"));
}

// Issue 57, a checkpoint without tokenizer files (tests/fixtures/bridgetower-tiny: config.json + model.safetensors):
// every command that reads it says --tokenizer_name is the way out and takes it; a tokenizer with more ids than the
// model's text embeddings is refused before anything is written (evaluate and encode used to crash in libtorch);
// train's own BPE takes --tokenizer_vocab_size.
TEST_F(TrainInputsCli, ACheckpointWithoutTokenizerFilesTakesTokenizerName) {
  const fs::path model = root_ / "no_tokenizer", small = root_ / "small_vocab", tok = fs::path(BT_TEXT_FIXTURES) / "tiny";
  fs::create_directories(model);
  for (const char* f : {"config.json", "model.safetensors"})
    fs::copy_file(fs::path(BT_TEXT_FIXTURES) / ".." / ".." / "fixtures" / "bridgetower-tiny" / f, model / f);
  fs::copy(model, small);
  auto cfg = bt::report::read_json_file(small / "config.json");
  cfg["text_config"]["vocab_size"] = 10;  // fewer rows than the tokenizer's 22 ids
  std::ofstream(small / "config.json") << cfg.dump();
  const std::string data = (root_ / "data").string();
  const auto evaluate = [&](const fs::path& m, const fs::path& out, std::vector<std::string> more) {
    std::vector<std::string> a{"evaluate", "--model_name_or_path", m.string(), "--validation_file", data,
                               "--output_dir", out.string(), "--dataloader_num_workers", "0"};
    a.insert(a.end(), more.begin(), more.end());
    return run(a, out.string() + ".log");
  };
  const auto encode = [&](const fs::path& m, const fs::path& out, std::vector<std::string> more) {
    std::vector<std::string> a{"encode", "--model_name_or_path", m.string(), "--data", data, "--output_dir",
                               out.string(), "--dataloader_num_workers", "0", "--torch_threads", "1"};
    a.insert(a.end(), more.begin(), more.end());
    return run(a, out.string() + ".log");
  };
  auto r = evaluate(model, root_ / "ev_none", {});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("holds no tokenizer (neither tokenizer.json nor vocab.json + merges.txt): give --tokenizer_name"),
            std::string::npos) << r.err;
  r = evaluate(model, root_ / "ev_tok", {"--tokenizer_name", tok.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  r = encode(model, root_ / "enc_tok", {"--tokenizer_name", tok.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(bt::report::read_json_file(root_ / "enc_tok" / "index.json")["tokenizer"], fs::absolute(tok).lexically_normal().string());
  // The default --max_seq_length (128) is capped to the 62 tokens the model's positions hold; asked for, refused.
  EXPECT_EQ(bt::report::read_json_file(root_ / "enc_tok" / "index.json")["transform"]["max_seq_length"], 62);
  const std::vector<std::string> too_long{"--tokenizer_name", tok.string(), "--max_seq_length", "100"};
  for (const auto& res : {encode(model, root_ / "enc_long", too_long), evaluate(model, root_ / "ev_long", too_long)}) {
    EXPECT_EQ(res.code, 1);
    EXPECT_NE(res.err.find("--max_seq_length 100: the model's text position embeddings hold at most 62 tokens"),
              std::string::npos) << res.err;
  }
  EXPECT_FALSE(fs::exists(root_ / "enc_long") || fs::exists(root_ / "ev_long"));
  // search on that index: its text query uses the tokenizer encode recorded; a contact sheet that cannot be drawn
  // or written is refused before anything is ranked or printed (issue 57: results, then rc 1; a .tmp file named).
  const std::string index = (root_ / "enc_tok").string();
  r = run({"search", "--index", index, "--query", "a man with a hat", "--top_k", "2"}, root_ / "search.log");
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string image = (root_ / "data" / "images" / fs::directory_iterator(root_ / "data" / "images")->path()
                                                             .filename()).string();
  r = run({"search", "--index", index, "--query_image", image, "--contact_sheet", (root_ / "s.png").string()},
          root_ / "search.log");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("error: --contact_sheet draws the top images of a text --query", 0), 0u) << r.err;
  r = run({"search", "--index", index, "--query", "a hat", "--contact_sheet", (root_ / "nowhere" / "s.png").string()},
          root_ / "search.log");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: --contact_sheet " + (root_ / "nowhere" / "s.png").string() + ": the folder " +
                       (root_ / "nowhere").string() + " does not exist (create it first)\n");
  // --max_image_pixels is a flag of every command whose errors name it (issue 57: "unknown flag").
  r = evaluate(model, root_ / "ev_px", {"--tokenizer_name", tok.string(), "--max_image_pixels", "100"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("exceeds --max_image_pixels 100"), std::string::npos) << r.err;
  r = encode(model, root_ / "enc_px", {"--tokenizer_name", tok.string(), "--max_image_pixels", "100"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("exceeds --max_image_pixels 100"), std::string::npos) << r.err;
  r = run(with(base(root_ / "px"), {"--max_image_pixels", "100"}), root_ / "px.log");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("exceeds --max_image_pixels 100"), std::string::npos) << r.err;
  for (const auto& res : {evaluate(small, root_ / "ev_small", {"--tokenizer_name", tok.string()}),
                          encode(small, root_ / "enc_small", {"--tokenizer_name", tok.string()})}) {
    EXPECT_EQ(res.code, 1);
    EXPECT_NE(res.err.find("has 22 ids but the model's text embeddings hold 10"), std::string::npos) << res.err;
    EXPECT_EQ(res.err.find("index out of range"), std::string::npos) << res.err;
  }
  EXPECT_FALSE(fs::exists(root_ / "ev_small") || fs::exists(root_ / "enc_small"));
  // train: without --tokenizer_name the same way out, before anything is written; with it, it fine-tunes (once
  // refused: "--model_name_or_path ... brings its own tokenizer").
  r = run(with(base(root_ / "ft_none"), {"--model_name_or_path", model.string(), "--image_size", "64"}),
          root_ / "ft_none.log");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("holds no tokenizer (neither tokenizer.json nor vocab.json + merges.txt): give --tokenizer_name"),
            std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "ft_none"));
  r = run(with(base(root_ / "ft_tok"), {"--model_name_or_path", model.string(), "--tokenizer_name", tok.string(),
                                        "--image_size", "64"}),
          root_ / "ft_tok.log");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(bt::report::read_json_file(root_ / "ft_tok" / "vocab.json"), bt::report::read_json_file(tok / "vocab.json"));
  r = run(with(base(root_ / "bpe300"), {"--tokenizer_vocab_size", "300"}), root_ / "bpe300.log");
  ASSERT_EQ(r.code, 0) << r.err;
  const int ids = bt::report::read_json_file(root_ / "bpe300" / "config.json")["text_config"]["vocab_size"].get<int>();
  EXPECT_LE(ids, 300);  // fewer when the captions run out of pairs (text/train_bpe.h)
  EXPECT_GT(ids, 261);
  EXPECT_NE(r.err.find("built a " + std::to_string(ids) + "-token BPE vocabulary"), std::string::npos) << r.err;
}

}  // namespace

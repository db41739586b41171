// `bridgetune evaluate` and its scoring (train/torch/embed_eval.h): matching agrees with scoring every
// (image, choice) pair through the full forward pass, retrieval agrees with the trainer's pair-forward eval, and
// bad rows give one-line errors naming file and line (or counted skips).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/captions_dataset.h"
#include "data/synth.h"
#include "run_bridgetune.h"
#include "train/torch/embed_eval.h"
#include "train/torch/evaluate.h"

namespace fs = std::filesystem;
using namespace bt;

namespace {

class Evaluate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_evaluate_" + std::to_string(getpid()));
    fs::remove_all(root_);
    data::SynthOptions so;
    so.n = 24, so.images = 8, so.seed = 5, so.accents = true;
    so.min_width = 96, so.max_width = 128, so.threads = 2;
    data::write_synth((root_ / "data").string(), so);
    // A checkpoint with its tokenizer: two steps of the tiny preset at 32 px.
    const int code = test::wait_exit_code(test::spawn_bridgetune(
        {"train", "--train_file", (root_ / "data").string(), "--output_dir", (root_ / "model").string(), "--image_size",
         "32", "--per_device_train_batch_size", "8", "--max_steps", "2", "--torch_threads", "1", "--save_steps", "0"},
        root_ / "train.log"));
    ASSERT_EQ(code, 0) << test::slurp(root_ / "train.log");
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static train::EmbedOptions options() {
    train::EmbedOptions o;
    o.batch_size = 5;  // not a divisor of the counts: the short last batch counts too
    o.num_workers = 2;
    o.image_size = 32;
    return o;
  }
  static fs::path root_;
};
fs::path Evaluate::root_;

// Every distinct image of the captions folder, transformed as evaluation does, by normalised path.
std::map<std::string, torch::Tensor> pixels_by_path(const fs::path& dir) {
  std::shared_ptr<const data::Dataset> ds(data::open_dataset(dir.string()));
  loader::LoaderOptions lo;
  lo.num_workers = 0;
  lo.batch_size = int(ds->size());
  lo.transform.image_size = 32;
  lo.sampler.shuffle = false;
  lo.sampler.batch_size = ds->size();
  loader::Loader l(ds, lo);
  l.start_epoch(0);
  auto b = l.next();
  std::map<std::string, torch::Tensor> out;
  auto all = torch::from_blob(b->pixels.data(), {b->size, 3, 32, 32}, torch::kFloat32).clone();
  for (int i = 0; i < b->size; ++i) out[b->image_keys[size_t(i)]] = all[i];
  return out;
}

}  // namespace

TEST_F(Evaluate, MatchingAgreesWithTheFullForwardOfEveryPair) {
  auto model = model::load_contrastive((root_ / "model").string());
  auto tok = text::Tokenizer::from_dir((root_ / "model").string());
  const std::string file = (root_ / "data" / "matching.jsonl").string();
  auto parsed = data::read_matching_file(file);
  auto r = train::evaluate_matching(model, tok, train::matching_set_of(parsed, file, (root_ / "data").string()), options());
  ASSERT_EQ(r.answers.size(), parsed.rows.size());
  EXPECT_EQ(r.images, 8);
  auto pixels = pixels_by_path(root_ / "data");
  model->eval();
  torch::NoGradGuard ng;
  int right = 0;
  for (size_t k = 0; k < parsed.rows.size(); ++k) {
    const auto& row = parsed.rows[k];
    const torch::Tensor img = pixels.at((root_ / "data" / row.image).lexically_normal().string()).unsqueeze(0);
    int best = -1;
    float best_score = -2;
    for (size_t c = 0; c < row.choices.size(); ++c) {
      auto ids = tok.encode(row.choices[c], true, 128);
      auto t = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end())).unsqueeze(0);
      auto out = model->forward(img, t, torch::ones_like(t), false);
      const float score = (out.text_embeds * out.image_embeds).sum().item<float>();
      EXPECT_NEAR(score, r.answers[k].scores[c], 2e-4) << "row " << k << " choice " << c;
      if (score > best_score) best = int(c), best_score = score;
    }
    EXPECT_EQ(r.answers[k].predicted, best) << "row " << k;
    right += best == row.label;
  }
  EXPECT_DOUBLE_EQ(r.scores.accuracy, double(right) / double(parsed.rows.size()));
}

TEST_F(Evaluate, RetrievalAgreesWithTheTrainersPairForwardEval) {
  auto model = model::load_contrastive((root_ / "model").string());
  auto tok = text::Tokenizer::from_dir((root_ / "model").string());
  std::shared_ptr<const data::Dataset> ds(data::open_dataset((root_ / "data").string()));
  auto mine = train::evaluate_retrieval(model, tok, ds, options());
  loader::LoaderOptions lo;
  lo.num_workers = 2;
  lo.batch_size = 6;
  lo.transform.image_size = 32;
  lo.sampler.shuffle = false;
  lo.sampler.batch_size = 6;
  loader::Loader l(ds, lo);
  auto ref = train::evaluate(model, l, tok, 128, torch::kCPU, false);
  EXPECT_EQ(mine.pairs, ref.samples);
  EXPECT_EQ(mine.images, ref.images);
  EXPECT_DOUBLE_EQ(mine.scores.i2t_r1, ref.recall.i2t_r1);
  EXPECT_DOUBLE_EQ(mine.scores.i2t_r5, ref.recall.i2t_r5);
  EXPECT_DOUBLE_EQ(mine.scores.t2i_r1, ref.recall.t2i_r1);
  EXPECT_DOUBLE_EQ(mine.scores.t2i_r5, ref.recall.t2i_r5);
}

TEST_F(Evaluate, CliNamesABadRowOrCountsItUnderSkip) {
  const fs::path dir = root_ / "bad";
  fs::create_directories(dir);
  fs::copy(root_ / "data" / "images", dir / "images", fs::copy_options::recursive | fs::copy_options::skip_existing);
  std::ofstream(dir / "m.jsonl") << R"({"image":"images/000001.jpg","caption_choices":["a cat","a dog"],"label":"B"})"
                                 << "\n"
                                 << R"({"image":"images/000002.jpg","caption_choices":["x","y"],"label":7})" << "\n"
                                 << R"({"image":"images/000003.jpg","caption_choices":["p","q"],"label":0})" << "\n";
  const std::vector<std::string> args = {"evaluate", "--model_name_or_path", (root_ / "model").string(),
                                         "--validation_file", (dir / "m.jsonl").string(), "--output_dir",
                                         (dir / "out").string()};
  EXPECT_NE(test::wait_exit_code(test::spawn_bridgetune(args, dir / "err.log")), 0);
  EXPECT_NE(test::slurp(dir / "err.log").find("m.jsonl:2: label 7 is outside its 2 choices"), std::string::npos)
      << test::slurp(dir / "err.log");
  EXPECT_FALSE(fs::exists(dir / "out" / "eval_results.json"));
  auto skip = args;
  skip.insert(skip.end(), {"--on_bad_sample", "skip"});
  ASSERT_EQ(test::wait_exit_code(test::spawn_bridgetune(skip, dir / "skip.log")), 0) << test::slurp(dir / "skip.log");
  auto results = nlohmann::json::parse(test::slurp(dir / "out" / "eval_results.json"));
  EXPECT_EQ(results.at("eval_matching_count").get<double>(), 2);
  EXPECT_EQ(results.at("eval_skipped").get<double>(), 1);
  std::ifstream pred(dir / "out" / "predictions.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(pred, line)) ++lines;
  EXPECT_EQ(lines, 2);
}

TEST_F(Evaluate, CliScoresParquetListColumns) {
  // The parquet fixture: caption_choices list<string> (row 4's list is empty) and is_cartoon (row 7 is null)
  // standing in for the label: 9 scorable rows, 2 bad ones.
  const std::string file = std::string(BT_PARQUET_FIXTURES) + "/images_zstd_plain_v2.parquet";
  const fs::path out = root_ / "pq";
  std::vector<std::string> args = {"evaluate", "--model_name_or_path", (root_ / "model").string(), "--validation_file",
                                   file, "--label_column", "is_cartoon", "--output_dir", out.string()};
  EXPECT_NE(test::wait_exit_code(test::spawn_bridgetune(args, root_ / "pq_err.log")), 0);
  EXPECT_NE(test::slurp(root_ / "pq_err.log").find("'caption_choices' is an empty list"), std::string::npos)
      << test::slurp(root_ / "pq_err.log");
  args.insert(args.end(), {"--on_bad_sample", "skip"});
  ASSERT_EQ(test::wait_exit_code(test::spawn_bridgetune(args, root_ / "pq.log")), 0) << test::slurp(root_ / "pq.log");
  auto results = nlohmann::json::parse(test::slurp(out / "eval_results.json"));
  EXPECT_EQ(results.at("eval_matching_count").get<double>(), 9);
  EXPECT_EQ(results.at("eval_skipped").get<double>(), 2);
  std::ifstream pred(out / "predictions.jsonl");
  std::string line;
  std::vector<int> rows;
  while (std::getline(pred, line)) rows.push_back(nlohmann::json::parse(line).at("row").get<int>());
  EXPECT_EQ(rows, (std::vector<int>{0, 1, 2, 3, 5, 6, 8, 9, 10}));
}

TEST_F(Evaluate, CliReadsAHubDatasetSplit) {
  // A dataset repository in a fake HF cache, laid out as the contest data is (CONFIG/SPLIT-*.parquet).
  const fs::path hub = root_ / "hub", repo = hub / "datasets--bt-test--nycc";
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "main") << commit;
  const fs::path config = repo / "snapshots" / commit / "matching";
  fs::create_directories(config);
  fs::copy_file(std::string(BT_PARQUET_FIXTURES) + "/images_zstd_plain_v2.parquet", config / "test-00000-of-00001.parquet");
  std::vector<std::string> args = {"evaluate", "--model_name_or_path", (root_ / "model").string(), "--dataset_name",
                                   "bt-test/nycc", "--dataset_config_name", "matching", "--cache_dir", hub.string(),
                                   "--label_column", "is_cartoon", "--on_bad_sample", "skip", "--output_dir",
                                   (root_ / "hubeval").string()};
  ASSERT_EQ(test::wait_exit_code(test::spawn_bridgetune(args, root_ / "hubeval.log")), 0) << test::slurp(root_ / "hubeval.log");
  auto results = nlohmann::json::parse(test::slurp(root_ / "hubeval" / "eval_results.json"));
  EXPECT_EQ(results.at("eval_matching_count").get<double>(), 9);
  args.insert(args.end(), {"--split", "dev"});
  EXPECT_NE(test::wait_exit_code(test::spawn_bridgetune(args, root_ / "hubeval_dev.log")), 0);
  EXPECT_NE(test::slurp(root_ / "hubeval_dev.log").find("--split dev: config 'matching' of"), std::string::npos)
      << test::slurp(root_ / "hubeval_dev.log");
  EXPECT_NE(test::slurp(root_ / "hubeval_dev.log").find("(splits: test)"), std::string::npos);
}

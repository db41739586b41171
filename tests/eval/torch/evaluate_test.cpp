// `bridgetune evaluate` and its scoring (eval/torch/embed_eval.h): matching agrees with scoring every
// (image, choice) pair through the full forward pass, retrieval from the encoders agrees with the forward's
// (the trainer's, with the loss; a short last batch of one row counts in the recall, not in the loss), and
// bad rows give one-line errors naming file and line (or counted skips); a model folder's preprocessor_config.json
// mean/std normalise the pixels of evaluate and of the trainer.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "../../train/torch/run_bridgetune.h"
#include "data/captions_dataset.h"
#include "data/synth.h"
#include "eval/torch/embed_eval.h"
#include "../rank_bounds.h"
#include "model/bridgetower.h"
#include "text/tokenizer.h"

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

  static eval::EmbedOptions options() {
    eval::EmbedOptions o;
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
  auto r = eval::evaluate_matching(model, tok, eval::matching_set_of(parsed, file, (root_ / "data").string()), options());
  ASSERT_EQ(r.answers.size(), parsed.rows.size());
  EXPECT_EQ(r.images, 8);
  auto pixels = pixels_by_path(root_ / "data");
  model->eval();
  torch::NoGradGuard ng;
  // The two paths' scores agree within kTol; the prediction is checked where the best choice leads the next by
  // more than 2 kTol (a nearer tie may fall either way), the accuracy within what the undecided rows allow.
  constexpr float kTol = 1e-5f;  // 300x the differences seen across ISAs (~3e-8)
  int right = 0, undecided = 0;
  for (size_t k = 0; k < parsed.rows.size(); ++k) {
    const auto& row = parsed.rows[k];
    const torch::Tensor img = pixels.at((root_ / "data" / row.image).lexically_normal().string()).unsqueeze(0);
    int best = -1;
    float best_score = -2, second = -2;
    for (size_t c = 0; c < row.choices.size(); ++c) {
      auto ids = tok.encode(row.choices[c], true, 128);
      auto t = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end())).unsqueeze(0);
      auto out = model->forward(img, t, torch::ones_like(t), false);
      const float score = (out.text_embeds * out.image_embeds).sum().item<float>();
      EXPECT_NEAR(score, r.answers[k].scores[c], kTol) << "row " << k << " choice " << c;
      if (score > best_score) {
        second = best_score, best = int(c), best_score = score;
      } else {
        second = std::max(second, score);
      }
    }
    if (best_score - second <= 2 * kTol) {
      ++undecided;
      continue;
    }
    EXPECT_EQ(r.answers[k].predicted, best) << "row " << k;
    right += best == row.label;
  }
  const double n = double(parsed.rows.size());
  EXPECT_LE(undecided, 2) << "the scores are too close to tell the predictions apart: the test needs other data";
  EXPECT_GE(r.scores.accuracy, right / n - 1e-12);
  EXPECT_LE(r.scores.accuracy, (right + undecided) / n + 1e-12);
}

// The recall each scoring of ds's rows may give when its cosines are within tol of encode's (every distinct image
// and caption embedded once; text t of row t, its image by key).
test::RetrievalRange retrieval_range_of(model::BridgeTowerForContrastiveLearning& model, const text::Tokenizer& tok,
                                        const std::shared_ptr<const data::Dataset>& ds, const eval::EmbedOptions& o,
                                        float tol) {
  auto enc = eval::encode_collection(model, tok, ds, o);
  std::map<std::string, int64_t> image_of_key, text_of_caption;
  for (size_t i = 0; i < enc.image_rows.size(); ++i) image_of_key[ds->image_key(enc.image_rows[i])] = int64_t(i);
  for (size_t t = 0; t < enc.text_values.size(); ++t) text_of_caption[enc.text_values[t]] = int64_t(t);
  std::vector<int64_t> text_rows, owners;
  for (size_t r = 0; r < ds->size(); ++r) {
    text_rows.push_back(text_of_caption.at(ds->caption(r)));
    owners.push_back(image_of_key.at(ds->image_key(r)));
  }
  const torch::Tensor sim = enc.texts.index_select(0, torch::tensor(text_rows)).matmul(enc.images.t()).contiguous();
  std::vector<float> s(sim.data_ptr<float>(), sim.data_ptr<float>() + sim.numel());
  return test::retrieval_bounds(s, int64_t(ds->size()), enc.images.size(0), owners, tol);
}

TEST_F(Evaluate, RetrievalFromTheEncodersAgreesWithTheTrainersForwardEval) {
  auto model = model::load_contrastive((root_ / "model").string());
  auto tok = text::Tokenizer::from_dir((root_ / "model").string());
  std::shared_ptr<const data::Dataset> ds(data::open_dataset((root_ / "data").string()));
  auto mine = eval::evaluate_retrieval(model, tok, ds, options());
  loader::LoaderOptions lo;
  lo.num_workers = 2;
  lo.batch_size = 6;
  lo.transform.image_size = 32;
  lo.sampler.shuffle = false;
  lo.sampler.batch_size = 6;
  loader::Loader l(ds, lo);
  auto ref = eval::evaluate_retrieval_with_loss(model, tok, ds, l, options());
  EXPECT_EQ(mine.pairs, ref.pairs);
  EXPECT_EQ(ref.loss_samples, 24);
  EXPECT_GT(ref.loss, 0);
  EXPECT_EQ(mine.images, ref.images);
  // The encoders and the forward give one model's embeddings in other batches: the recalls agree as far as float
  // error allows (tests/eval/rank_bounds.h), judged on encode's embeddings of the same rows.
  const auto range = retrieval_range_of(model, tok, ds, options(), 1e-4f);
  test::expect_within(mine.scores, range, "the encoders");
  test::expect_within(ref.scores, range, "the forward");
  // A last batch of one row: no loss (no negatives), but its row is a query like every other.
  lo.batch_size = 23;
  lo.sampler.batch_size = 23;
  loader::Loader odd(ds, lo);
  auto tail = eval::evaluate_retrieval_with_loss(model, tok, ds, odd, options());
  EXPECT_EQ(tail.batches, 2);
  EXPECT_EQ(tail.loss_samples, 23);
  EXPECT_EQ(tail.pairs, 24);
  test::expect_within(tail.scores, range, "the forward in batches of 23 and 1");
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

// Without --task the data decides, and says so: image-caption pairs are scored for retrieval (predictions.jsonl: each
// row's image rank and the best images; the share ranked first is t2i R@1), matching-shaped data for matching.
TEST_F(Evaluate, CliPicksTheTaskFromTheDataAndWritesPredictionsForBoth) {
  const fs::path out = root_ / "auto";
  std::vector<std::string> args = {"evaluate", "--model_name_or_path", (root_ / "model").string(), "--validation_file",
                                   (root_ / "data" / "captions.jsonl").string(), "--output_dir", out.string()};
  ASSERT_EQ(test::wait_exit_code(test::spawn_bridgetune(args, root_ / "auto.log")), 0) << test::slurp(root_ / "auto.log");
  EXPECT_NE(test::slurp(root_ / "auto.log").find("evaluate: task retrieval"), std::string::npos) << test::slurp(root_ / "auto.log");
  const auto results = nlohmann::json::parse(test::slurp(out / "eval_results.json"));
  std::ifstream pred(out / "predictions.jsonl");
  int lines = 0, first = 0;
  for (std::string line; std::getline(pred, line); ++lines) {
    const auto row = nlohmann::json::parse(line);
    first += row.at("rank").get<int>() == 1;
    EXPECT_LE(row.at("top_images").size(), 5u);
    EXPECT_EQ(row.at("top_images")[0] == row.at("image"), row.at("rank").get<int>() == 1) << line;
  }
  EXPECT_EQ(lines, results.at("eval_samples").get<int>());
  EXPECT_NEAR(double(first) / lines, results.at("eval_t2i_r1").get<double>(), 1e-9);
  args[4] = (root_ / "data").string();  // the folder: matching.jsonl beside the captions
  ASSERT_EQ(test::wait_exit_code(test::spawn_bridgetune(args, root_ / "auto_m.log")), 0) << test::slurp(root_ / "auto_m.log");
  EXPECT_NE(test::slurp(root_ / "auto_m.log").find("evaluate: task matching"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(test::slurp(out / "eval_results.json")).contains("eval_matching_accuracy"));
}

// --task retrieval writes predictions.jsonl as the data's own choice does (--help says so), and a captions CSV is
// image-caption pairs: scored for retrieval, while --task matching on it says in one line what matching reads
// (it used to fail parsing the CSV header as JSON: "not valid JSON ... last read: 'i'").
TEST_F(Evaluate, CliTaskRetrievalWritesPredictionsAndReadsACaptionsCsv) {
  const fs::path dir = root_ / "csv";
  fs::create_directories(dir);
  fs::copy(root_ / "data" / "images", dir / "images", fs::copy_options::recursive | fs::copy_options::skip_existing);
  {
    std::ifstream jsonl(root_ / "data" / "captions.jsonl");
    std::ofstream csv(dir / "captions.csv");
    csv << "image,caption\n";
    for (std::string line; std::getline(jsonl, line);) {
      const auto row = nlohmann::json::parse(line);
      std::string caption;
      for (char c : row.at("caption").get<std::string>()) caption += c == '"' ? std::string("\"\"") : std::string(1, c);
      csv << row.at("image").get<std::string>() << ",\"" << caption << "\"\n";
    }
  }
  std::vector<std::string> args = {"evaluate", "--model_name_or_path", (root_ / "model").string(), "--validation_file",
                                   (dir / "captions.csv").string(), "--output_dir", (dir / "out").string(), "--task",
                                   "retrieval"};
  ASSERT_EQ(test::wait_exit_code(test::spawn_bridgetune(args, dir / "r.log")), 0) << test::slurp(dir / "r.log");
  const auto results = nlohmann::json::parse(test::slurp(dir / "out" / "eval_results.json"));
  std::ifstream pred(dir / "out" / "predictions.jsonl");
  int lines = 0;
  for (std::string line; std::getline(pred, line); ++lines) EXPECT_TRUE(nlohmann::json::parse(line).contains("rank"));
  EXPECT_EQ(lines, results.at("eval_samples").get<int>());
  EXPECT_EQ(lines, 24);
  args.resize(args.size() - 2);  // no --task: the CSV has no caption_choices, so retrieval, said in one line
  ASSERT_EQ(test::wait_exit_code(test::spawn_bridgetune(args, dir / "auto.log")), 0) << test::slurp(dir / "auto.log");
  EXPECT_NE(test::slurp(dir / "auto.log").find("evaluate: task retrieval"), std::string::npos) << test::slurp(dir / "auto.log");
  args[6] = (dir / "m_out").string();
  args.insert(args.end(), {"--task", "matching"});
  EXPECT_NE(test::wait_exit_code(test::spawn_bridgetune(args, dir / "m.log")), 0);
  const std::string m = test::slurp(dir / "m.log");
  EXPECT_NE(m.find("captions.csv: no matching questions in it"), std::string::npos) << m;
  EXPECT_NE(m.find("--task retrieval"), std::string::npos) << m;
  EXPECT_EQ(m.find("not valid JSON"), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(dir / "m_out"));
}

// --on_bad_sample skip: the images left out are counted and named, with why, in eval_results.json.
TEST_F(Evaluate, CliNamesTheImagesItSkipped) {
  const fs::path dir = root_ / "holes";
  fs::create_directories(dir);
  fs::copy(root_ / "data", dir, fs::copy_options::recursive | fs::copy_options::skip_existing);
  fs::remove(dir / "images" / "000001.jpg");
  const std::vector<std::string> args = {"evaluate", "--model_name_or_path", (root_ / "model").string(),
                                         "--validation_file", (dir / "captions.jsonl").string(), "--task", "retrieval",
                                         "--on_bad_sample", "skip", "--per_device_eval_batch_size", "3",
                                         "--output_dir", (dir / "out").string()};
  ASSERT_EQ(test::wait_exit_code(test::spawn_bridgetune(args, dir / "skip.log")), 0) << test::slurp(dir / "skip.log");
  auto results = nlohmann::json::parse(test::slurp(dir / "out" / "eval_results.json"));
  EXPECT_GT(results.at("eval_skipped").get<double>(), 0);
  ASSERT_TRUE(results.contains("eval_first_skipped")) << results.dump();
  EXPECT_NE(results["eval_first_skipped"][0].get<std::string>().find("000001.jpg"), std::string::npos) << results.dump();
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
  // --split defaults to validation (cli::kDefaultEvalSplit), as in encode
  fs::copy_file(std::string(BT_PARQUET_FIXTURES) + "/images_zstd_plain_v2.parquet", config / "validation-00000-of-00001.parquet");
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
  EXPECT_NE(test::slurp(root_ / "hubeval_dev.log").find("(splits: validation)"), std::string::npos);
}

// A model folder whose preprocessor_config.json names another normalisation (and another size, as an HF repo for a
// larger model might): the trainer's loaders and `evaluate`'s embedding path normalise with its mean/std, the output
// stays the model's image_size (one log line says so), and the folder the trainer writes keeps the mean/std.
TEST_F(Evaluate, PreprocessorConfigMeanStdDriveTrainAndEvaluate) {
  const fs::path odd = root_ / "odd", out = root_ / "odd_out";
  fs::remove_all(odd);
  fs::copy(root_ / "model", odd, fs::copy_options::recursive);
  const std::array<double, 3> mean{0.25, 0.5, 0.75}, stdv{0.125, 0.25, 0.5};
  std::ofstream(odd / "preprocessor_config.json")
      << nlohmann::json{{"image_processor_type", "BridgeTowerImageProcessor"}, {"size", {{"shortest_edge", 288}}},
                        {"image_mean", mean}, {"image_std", stdv}}.dump();
  auto m = model::load_contrastive(odd.string());
  ASSERT_EQ(m->config().image.mean, mean);
  ASSERT_EQ(m->config().image.std, stdv);
  auto tok = text::Tokenizer::from_dir(odd.string());

  // The loader, configured from the folder: pixel_values == (x / 255 - mean) / std for every value.
  std::shared_ptr<const data::Dataset> ds(data::open_dataset((root_ / "data").string()));
  auto loader_for = [&](const model::ImageNormalization& norm, int batch, bool u8) {
    loader::LoaderOptions lo;
    lo.num_workers = 1, lo.batch_size = batch, lo.output_u8 = u8;
    lo.transform.image_size = 32;  // and the trainer's default --jpeg_dct_scaling true: its val loader's spec
    norm.apply_to(lo.transform);
    lo.sampler.shuffle = false, lo.sampler.batch_size = size_t(batch);
    return std::make_unique<loader::Loader>(ds, lo);
  };
  auto l = loader_for(m->config().image, int(ds->size()), true);
  l->start_epoch(0);
  auto b = l->next();
  const size_t plane = 32 * 32;
  for (size_t i = 0; i < size_t(b->size); ++i)
    for (size_t p = 0; p < plane; ++p)
      for (size_t c = 0; c < 3; ++c)
        ASSERT_EQ(b->pixels[(i * 3 + c) * plane + p],
                  (float(b->pixels_u8[(i * plane + p) * 3 + c]) / 255.0f - float(mean[c])) / float(stdv[c]))
            << "sample " << i << " pixel " << p << " channel " << c;

  // evaluate's path: the matching scores are those of the full forward on these pixels, not on CLIP's.
  const std::string file = (root_ / "data" / "matching.jsonl").string();
  auto parsed = data::read_matching_file(file);
  auto set = eval::matching_set_of(parsed, file, (root_ / "data").string());
  set.rows.resize(3);
  eval::EmbedOptions eo = options();
  eo.num_workers = 0;
  auto r = eval::evaluate_matching(m, tok, set, eo);
  std::map<std::string, torch::Tensor> odd_pixels;
  auto all = torch::from_blob(b->pixels.data(), {b->size, 3, 32, 32}, torch::kFloat32);
  for (int i = 0; i < b->size; ++i) odd_pixels[b->image_keys[size_t(i)]] = all[i];
  const auto clip_pixels = pixels_by_path(root_ / "data");
  {
    torch::NoGradGuard ng;
    m->eval();
    for (size_t k = 0; k < set.rows.size(); ++k) {
      const std::string key = (root_ / "data" / parsed.rows[k].image).lexically_normal().string();
      ASSERT_TRUE(odd_pixels.count(key)) << key;
      auto ids = tok.encode(parsed.rows[k].choices[0], true, 128);
      auto t = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end())).unsqueeze(0);
      auto score = [&](const torch::Tensor& px) {
        auto o = m->forward(px.unsqueeze(0), t, torch::ones_like(t), false);
        return (o.text_embeds * o.image_embeds).sum().item<float>();
      };
      EXPECT_NEAR(score(odd_pixels.at(key)), r.answers[k].scores[0], 2e-4) << "row " << k;
      EXPECT_GT(std::abs(score(clip_pixels.at(key)) - r.answers[k].scores[0]), 1e-3) << "row " << k;
    }
  }

  // The trainer: one step at learning rate 0 leaves the weights, so its end-of-run eval loss is that of its
  // validation loader's pixels; they must be the folder's normalisation, and the folder it writes keeps it.
  const std::vector<std::string> args = {
      "train", "--model_name_or_path", odd.string(), "--train_file", (root_ / "data").string(), "--validation_file",
      (root_ / "data").string(), "--output_dir", out.string(), "--per_device_train_batch_size", "8",
      "--per_device_eval_batch_size", "8", "--max_steps", "1", "--learning_rate", "0", "--torch_threads", "1",
      "--dataloader_num_workers", "1", "--save_steps", "0"};
  ASSERT_EQ(test::wait_exit_code(test::spawn_bridgetune(args, root_ / "odd_train.log")), 0)
      << test::slurp(root_ / "odd_train.log");
  const std::string log = test::slurp(root_ / "odd_train.log");
  EXPECT_NE(log.find("resizes to 288 and crops to 288, but the model's vision image_size is 32"), std::string::npos)
      << log;
  const double trained_loss = nlohmann::json::parse(test::slurp(out / "train_results.json")).at("eval_loss");
  auto odd_eval = loader_for(m->config().image, 8, false);
  auto clip_eval = loader_for(model::ImageNormalization{}, 8, false);
  const double want = eval::evaluate_retrieval_with_loss(m, tok, ds, *odd_eval, options()).loss;
  const double clip = eval::evaluate_retrieval_with_loss(m, tok, ds, *clip_eval, options()).loss;
  EXPECT_NEAR(trained_loss, want, 1e-4 * std::abs(want));
  EXPECT_GT(std::abs(clip - want), 1e-3 * std::abs(want)) << "the two normalisations should give different losses";
  const model::ImageProcessorConfig saved = model::read_preprocessor_config((out / "preprocessor_config.json").string());
  EXPECT_EQ(saved.norm.mean, mean);
  EXPECT_EQ(saved.norm.std, stdv);
  EXPECT_EQ(saved.crop_size, 32);
}

// NaN embeddings (damaged or diverged weights) are refused with one line, never scored: NaN similarities once
// counted as hits and gave such a model R@1 = 1.0.
TEST_F(Evaluate, NonFiniteEmbeddingsAreRefusedNotScored) {
  auto model = model::load_contrastive((root_ / "model").string());
  {
    torch::NoGradGuard ng;
    for (auto& p : model->named_parameters())
      if (p.key().find("text_projection") != std::string::npos || p.key().find("itc_text_head") != std::string::npos)
        p.value().fill_(std::numeric_limits<float>::quiet_NaN());
  }
  const auto tok = text::Tokenizer::from_dir((root_ / "model").string());
  try {
    eval::embed_text_list(model, tok, {"a cartoon"}, options());
    ADD_FAILURE() << "scored NaN embeddings";
  } catch (const bt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("text embeddings are not finite"), std::string::npos) << e.what();
  }
}

// `bridgetune encode` and `bridgetune search` end to end (index/embed_index.h): the index holds one normalised
// embedding per distinct image and caption, and search's scores are exactly the dot products of those vectors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/file_gate.h"
#include "data/synth.h"
#include "media/npy.h"
#include "report/run_log.h"
#include "run_bridgetune.h"

namespace fs = std::filesystem;

namespace {

struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> v;
  double dot(int64_t i, const Matrix& o, int64_t j) const {
    double s = 0;
    for (int64_t k = 0; k < cols; ++k) s += double(v[size_t(i * cols + k)]) * o.v[size_t(j * cols + k)];
    return s;
  }
};

Matrix read_npy(const fs::path& p) {
  std::vector<uint8_t> b;
  bt::read_regular_file(p.string(), b, 1 << 28);
  const auto m = bt::media::parse_npy_f32_matrix(b, p.string());
  Matrix out{m.rows, m.cols, std::vector<float>(size_t(m.rows * m.cols))};
  std::memcpy(out.v.data(), b.data() + m.data_offset, out.v.size() * 4);
  return out;
}

std::vector<nlohmann::json> lines_of(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l[0] == '{') out.push_back(nlohmann::json::parse(l));
  return out;
}

class EncodeSearch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("bt_encode_" + std::to_string(getpid()));
    fs::remove_all(root_);
    bt::data::SynthOptions so;
    so.n = 24, so.images = 8, so.seed = 4, so.min_width = 96, so.max_width = 128, so.threads = 2;
    bt::data::write_synth((root_ / "data").string(), so);
    ASSERT_EQ(run({"train", "--train_file", (root_ / "data").string(), "--output_dir", (root_ / "model").string(),
                   "--image_size", "32", "--per_device_train_batch_size", "8", "--max_steps", "2", "--torch_threads",
                   "1", "--eval_steps", "0", "--save_steps", "0"}, "train"), 0);
    ASSERT_EQ(run({"encode", "--model_name_or_path", (root_ / "model").string(), "--data", (root_ / "data").string(),
                   "--output_dir", (root_ / "index").string(), "--per_device_eval_batch_size", "3"}, "encode"), 0);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  static int run(const std::vector<std::string>& args, const std::string& name) {
    return bt::test::wait_exit_code(bt::test::spawn_bridgetune(args, root_ / (name + ".log")));
  }
  static std::string log(const std::string& name) { return bt::test::slurp(root_ / (name + ".log")); }
  static inline fs::path root_;
};

TEST_F(EncodeSearch, TheIndexHoldsEveryDistinctImageAndCaptionNormalised) {
  const fs::path idx = root_ / "index";
  const Matrix img = read_npy(idx / "image_embeds.npy"), txt = read_npy(idx / "text_embeds.npy");
  EXPECT_EQ(img.rows, 8);  // 24 rows share 8 pictures
  EXPECT_EQ(lines_of(bt::test::slurp(idx / "images.jsonl")).size(), 8u);
  EXPECT_EQ(size_t(txt.rows), lines_of(bt::test::slurp(idx / "texts.jsonl")).size());
  EXPECT_GT(txt.rows, 8);
  EXPECT_EQ(img.cols, txt.cols);
  for (int64_t i = 0; i < img.rows; ++i) EXPECT_NEAR(img.dot(i, img, i), 1.0, 1e-4) << "image " << i;
  const auto index = bt::report::read_json_file(idx / "index.json");
  EXPECT_EQ(index.at("images"), 8);
  EXPECT_EQ(index.at("dim"), img.cols);
  EXPECT_NE(log("encode").find("images/s"), std::string::npos) << log("encode");
}

TEST_F(EncodeSearch, ScoresAreTheIndexsDotProducts) {
  const fs::path idx = root_ / "index";
  const Matrix img = read_npy(idx / "image_embeds.npy"), txt = read_npy(idx / "text_embeds.npy");
  const auto texts = lines_of(bt::test::slurp(idx / "texts.jsonl"));
  const auto images = lines_of(bt::test::slurp(idx / "images.jsonl"));
  // A caption of the index as the query: its embedding is text row 2, so image i scores txt[2] . img[i].
  ASSERT_EQ(run({"search", "--index", idx.string(), "--query", texts[2].at("text"), "--top_k", "3", "--json",
                 "--contact_sheet", (root_ / "sheet.png").string()}, "search"), 0) << log("search");
  const auto hits = lines_of(log("search"));
  ASSERT_EQ(hits.size(), 3u) << log("search");
  for (size_t r = 0; r < hits.size(); ++r) {
    EXPECT_EQ(hits[r].at("rank"), r + 1);
    int64_t i = -1;
    for (size_t k = 0; k < images.size(); ++k)
      if (images[k].at("image") == hits[r].at("image")) i = int64_t(k);
    ASSERT_GE(i, 0);
    EXPECT_NEAR(hits[r].at("score").get<double>(), txt.dot(2, img, i), 1e-4);
    if (r > 0) {
      EXPECT_LE(hits[r].at("score").get<double>(), hits[r - 1].at("score").get<double>());
    }
  }
  EXPECT_GT(fs::file_size(root_ / "sheet.png"), 100u);
  // An image of the index as the query ranks the captions by img[0] . txt[t].
  ASSERT_EQ(run({"search", "--index", idx.string(), "--query_image", images[0].at("image"), "--top_k", "1", "--json"},
                "search_image"), 0) << log("search_image");
  const auto best = lines_of(log("search_image"));
  ASSERT_EQ(best.size(), 1u);
  double top = -2;
  for (int64_t t = 0; t < txt.rows; ++t) top = std::max(top, img.dot(0, txt, t));
  EXPECT_NEAR(best[0].at("score").get<double>(), top, 1e-4);
  EXPECT_EQ(run({"search", "--index", idx.string()}, "search_none"), 1);
  EXPECT_NE(log("search_none").find("exactly one of --query"), std::string::npos) << log("search_none");
}

// WebP, GIF, BMP and TIFF images are encoded and queried as Pillow reads them: each one's embedding is that of the
// PNG of Pillow's Image.open(f).convert("RGB") (tests/media/formats), and --query_image takes them.
TEST_F(EncodeSearch, EveryFormatIsEncodedAndQueriedAsPillowReadsIt) {
  const fs::path data = root_ / "formats", idx = root_ / "formats_index";
  fs::create_directories(data);
  const std::pair<const char*, const char*> files[] = {{"lossless.webp", "lossless_webp.png"},
                                                       {"palette.gif", "palette_gif.png"},
                                                       {"rle8.bmp", "rle8_bmp.png"},
                                                       {"ycbcr_jpeg.tif", "ycbcr_jpeg_tif.png"}};
  std::ofstream captions(data / "captions.jsonl");
  for (const auto& pair : files)
    for (const char* name : {pair.first, pair.second}) {
      fs::copy_file(fs::path(BT_MEDIA_FORMATS_DIR) / name, data / name);
      captions << nlohmann::json{{"image", name}, {"caption", std::string("a picture ") + name}}.dump() << "\n";
    }
  captions.close();
  ASSERT_EQ(run({"encode", "--model_name_or_path", (root_ / "model").string(), "--data", data.string(),
                 "--output_dir", idx.string()}, "encode_formats"), 0) << log("encode_formats");
  const Matrix img = read_npy(idx / "image_embeds.npy");
  const auto images = lines_of(bt::test::slurp(idx / "images.jsonl"));
  ASSERT_EQ(images.size(), 8u);
  auto row = [&](const std::string& name) {
    for (size_t k = 0; k < images.size(); ++k)
      if (fs::path(images[k].at("image").get<std::string>()).filename() == name) return int64_t(k);
    ADD_FAILURE() << name << " not in the index";
    return int64_t(0);
  };
  for (const auto& pair : files) {
    SCOPED_TRACE(pair.first);
    EXPECT_NEAR(img.dot(row(pair.first), img, row(pair.second)), 1.0, 1e-5) << "the same pixels, the same embedding";
    for (const auto& other : files)  // and a different picture does not score 1, so the check above tells
      if (other.first != pair.first) {
        EXPECT_LT(img.dot(row(pair.first), img, row(other.second)), 1.0 - 1e-4) << other.first;
      }
    ASSERT_EQ(run({"search", "--index", idx.string(), "--query_image", (data / pair.first).string(), "--top_k", "1",
                   "--json"}, "search_format"), 0) << log("search_format");
    ASSERT_EQ(run({"search", "--index", idx.string(), "--query_image", (data / pair.second).string(), "--top_k", "1",
                   "--json"}, "search_png"), 0) << log("search_png");
    const auto a = lines_of(log("search_format")), b = lines_of(log("search_png"));
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(a[0].at("text"), b[0].at("text"));
    EXPECT_NEAR(a[0].at("score").get<double>(), b[0].at("score").get<double>(), 1e-5);
  }
}

// Issue 53: an index folder is shared like any download. A doctored one must not run a command (the canary stays
// absent), must not reach the terminal with control bytes, and an index of other data is one line naming the file.
TEST_F(EncodeSearch, ADoctoredIndexRunsNothingAndPrintsNoControlBytes) {
  const fs::path bad = root_ / "doctored";
  fs::remove_all(bad);
  fs::copy(root_ / "index", bad);
  const fs::path canary = root_ / "canary";
  nlohmann::json index = bt::report::read_json_file(bad / "index.json");
  index["data"] = "pipe:touch " + canary.string() + "; cat " + (root_ / "none.tar").string();
  std::ofstream(bad / "index.json") << index.dump();
  std::string images = bt::test::slurp(bad / "images.jsonl");  // every key retitles the window and rings
  for (size_t at = 0; (at = images.find("\"image\":\"", at)) != std::string::npos; at += 9)
    images.insert(at + 9, "\\u001b]0;pwned\\u0007\\u001b[2J");
  std::ofstream(bad / "images.jsonl") << images;
  const std::vector<std::string> query{"search", "--index", bad.string(), "--query", "a cartoon", "--top_k", "2",
                                       "--contact_sheet", (root_ / "bad.png").string()};
  ASSERT_EQ(run(query, "search_doctored"), 1) << log("search_doctored");
  const std::string out = log("search_doctored");
  EXPECT_FALSE(fs::exists(canary)) << out;
  EXPECT_NE(out.find((bad / "index.json").string() + ": data 'pipe:touch"), std::string::npos) << out;
  EXPECT_NE(out.find("\\x1b]0;pwned\\x07"), std::string::npos) << out;  // the keys, escaped
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  // Data with fewer rows than the index's keys: one line naming the index (was vector::_M_range_check).
  {
    std::istringstream in(bt::test::slurp(root_ / "data" / "captions.jsonl"));
    std::ofstream two(root_ / "data" / "two.jsonl");
    std::string line;
    for (int i = 0; i < 2 && std::getline(in, line); ++i) two << line << "\n";
  }
  index["data"] = (root_ / "data" / "two.jsonl").string();
  std::ofstream(bad / "index.json") << index.dump();
  std::vector<std::string> top_all = query;
  top_all[6] = "8";
  ASSERT_EQ(run(top_all, "search_fewer"), 1) << log("search_fewer");
  EXPECT_NE(log("search_fewer").find("error: " + (bad / "index.json").string() + ": its images.jsonl names row "),
            std::string::npos) << log("search_fewer");
  EXPECT_EQ(log("search_fewer").find("_M_range_check"), std::string::npos) << log("search_fewer");
}

}  // namespace

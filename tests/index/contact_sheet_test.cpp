// search's contact sheet (index/contact_sheet.h): one thumbnail per row in the rows' order (empty where the image
// cannot be read), drawn as a 4-column grid whose cells hold exactly those pixels (grey for an unreadable one).
#include "index/contact_sheet.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.h"
#include "common/file_gate.h"
#include "data/captions_dataset.h"
#include "data/synth.h"
#include "media/decode.h"

namespace bt::index {
namespace {
namespace fs = std::filesystem;

class ContactSheet : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "bt_contact_sheet_XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    data::SynthOptions s;
    s.n = 8, s.images = 4, s.seed = 5, s.min_width = 40, s.max_width = 90, s.threads = 1;
    data::write_synth(dir_, s);
    data::ParsedCaptions parsed;  // rows 0-3: the four pictures; row 4: a file that does not exist
    for (int i = 0; i < 4; ++i) parsed.rows.push_back({"images/00000" + std::to_string(i) + ".jpg", "c", size_t(i + 1), false, ""});
    parsed.rows.push_back({"images/missing.jpg", "c", 5, false, ""});
    data_ = std::make_shared<data::CaptionsDataset>(std::move(parsed), dir_ + "/rows", dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
  std::shared_ptr<const data::Dataset> data_;
};

TEST_F(ContactSheet, ThumbnailsFollowTheRowsAndLeaveUnreadableOnesEmpty) {
  ASSERT_TRUE(fs::exists(dir_ + "/images/000003.jpg"));
  const auto t = thumbnails(data_, {2, 4, 0}, 32);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].size(), 32u * 32 * 3);
  EXPECT_TRUE(t[1].empty());
  EXPECT_EQ(t[2].size(), 32u * 32 * 3);
  EXPECT_NE(t[0], t[2]);
  EXPECT_EQ(thumbnails(data_, {2}, 32)[0], t[0]);  // a row's thumbnail does not depend on its neighbours
  EXPECT_EQ(thumbnails(data_, {0}, 32)[0], t[2]);
}

TEST_F(ContactSheet, GridHoldsTheThumbnailsInRankOrder) {
  const std::vector<size_t> rows{3, 1, 0, 2, 4};
  const std::string png = dir_ + "/sheet.png";
  write_contact_sheet(png, data_, rows, {0.9f, 0.8f, 0.7f, 0.6f, 0.5f});
  std::vector<uint8_t> bytes;
  read_regular_file(png, bytes, 1 << 24);
  media::ImageU8 img;
  media::decode_rgb8(bytes, 1ull << 26, img);
  constexpr int kThumb = 160, kPad = 12, kLabel = 22;
  ASSERT_EQ(img.width, kPad + 4 * (kThumb + kPad));       // 4 columns
  ASSERT_EQ(img.height, kPad + 2 * (kThumb + kLabel + kPad));  // 5 results: 2 rows
  const auto thumbs = thumbnails(data_, rows, kThumb);
  auto px = [&](int x, int y) {
    const uint8_t* p = img.pixels.data() + (size_t(y) * size_t(img.width) + size_t(x)) * 3;
    return std::vector<uint8_t>(p, p + 3);
  };
  for (int i = 0; i < 4; ++i) {  // the first row of the grid: results 1-4, pixel for pixel
    const int x0 = kPad + i * (kThumb + kPad), y0 = kPad;
    for (int y = 0; y < kThumb; y += 17)
      for (int x = 0; x < kThumb; x += 13) {
        const uint8_t* t = thumbs[size_t(i)].data() + (size_t(y) * kThumb + size_t(x)) * 3;
        ASSERT_EQ(px(x0 + x, y0 + y), std::vector<uint8_t>(t, t + 3)) << "result " << i + 1 << " at " << x << "," << y;
      }
  }
  const int y5 = kPad + kThumb + kLabel + kPad;  // the fifth result, unreadable: a grey cell
  EXPECT_EQ(px(kPad + 80, y5 + 80), (std::vector<uint8_t>{220, 220, 220}));
  EXPECT_EQ(px(2, 2), (std::vector<uint8_t>{255, 255, 255}));  // the margin
}

// Issue 53: an index folder is something people share. Its index.json naming its data as a pipe: command must not
// run it (the canary stays absent) and is refused naming the file; an index of other data (rows past the data's
// end), or a row that is not a whole number, is one line naming the file instead of vector::_M_range_check.
TEST_F(ContactSheet, AnIndexsDataIsNeverACommandAndMustHoldItsRows) {
  const std::string canary = dir_ + "/canary", index_file = dir_ + "/E/index.json";
  const nlohmann::json doctored = {{"data", "pipe:touch " + canary + "; cat " + dir_ + "/x.tar"}};
  std::string e;
  try {
    open_index_data(doctored, index_file, {0});
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_EQ(e.rfind(index_file + ": data 'pipe:touch ", 0), 0u) << e;
  EXPECT_FALSE(fs::exists(canary));

  const nlohmann::json index = {{"data", dir_ + "/captions.jsonl"}};
  const size_t rows = open_index_data(index, index_file, {0, 7})->size();
  EXPECT_EQ(rows, 8u);
  try {
    e.clear();
    open_index_data(index, index_file, {3, 8});
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_EQ(e.rfind(index_file + ": its images.jsonl names row 8 but its data", 0), 0u) << e;
  EXPECT_NE(e.find("has 8 rows"), std::string::npos) << e;
  const std::vector<nlohmann::json> images = {{{"image", "a"}, {"row", 2}}, {{"image", "b"}, {"row", -1}}};
  EXPECT_EQ(index_rows(images, {0}, "E/images.jsonl"), std::vector<size_t>{2});
  try {
    e.clear();
    index_rows(images, {1}, "E/images.jsonl");
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_EQ(e.rfind("E/images.jsonl:2: \"row\" must be a whole number", 0), 0u) << e;
}

}  // namespace
}  // namespace bt::index

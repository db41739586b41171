// HF's BridgeTowerImageProcessor gives bridgetune's eval pixels: the arrays in fixtures/hf_processor are what
// transformers 4.30.2 computed for its PNGs from the preprocessor_config.json there (make_hf_processor_fixture.py),
// which must be the file bridgetune writes today; bridgetune's transform must match them within 1 uint8 level.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "common/file_gate.h"
#include "common/json.h"
#include "media/npy.h"
#include "media/transform.h"
#include "model/preprocessor.h"
#include "model_fixtures_dir.h"

using namespace bt::model;

namespace {

const std::string kDir = std::string(BT_MODEL_FIXTURES) + "/hf_processor";

std::vector<uint8_t> bytes_of(const std::string& path) {
  const std::string s = bt::read_small_file(path, 1 << 20);
  return {s.begin(), s.end()};
}

}  // namespace

TEST(HfProcessor, TheFixtureWasMadeFromWhatBridgetuneWrites) {
  const auto path = std::filesystem::temp_directory_path() / ("bt_hfpp_" + std::to_string(getpid()) + ".json");
  write_preprocessor_config(path.string(), 64, ImageNormalization{});
  const auto written = bt::parse_json_text(bt::read_small_file(path.string()), path.string());
  std::filesystem::remove(path);
  const std::string fixture = kDir + "/preprocessor_config.json";
  EXPECT_EQ(written, bt::parse_json_text(bt::read_small_file(fixture), fixture))
      << "write_preprocessor_config changed: remake the fixture with make_hf_processor_fixture.py";
  EXPECT_EQ(written["size_divisor"], 1);  // HF's default 32 squashes non-square images
  EXPECT_EQ(written["crop_size"], nlohmann::json({{"shortest_edge", 64}}));
}

TEST(HfProcessor, EvalPixelsMatchHfWithinOneLevel) {
  const ImageProcessorConfig c = read_preprocessor_config(kDir + "/preprocessor_config.json");
  bt::media::TransformSpec spec;
  spec.image_size = c.crop_size;
  c.norm.apply_to(spec);
  const int S = spec.image_size;
  auto scratch = bt::media::make_scratch();
  for (const char* name : {"96x72", "72x96", "150x100", "40x30"}) {
    std::vector<uint8_t> hwc(3 * S * S);
    std::vector<float> chw(3 * S * S);
    bt::media::transform_to_u8(bytes_of(kDir + "/" + name + ".png"), spec, 0, hwc.data(), *scratch);
    bt::media::normalize_hwc_to_chw(hwc.data(), S, S, chw.data(), spec.mean.data(), spec.std.data());
    const std::vector<uint8_t> npy = bytes_of(kDir + "/" + name + ".npy");
    const auto m = bt::media::parse_npy_f32_matrix(npy, name);
    ASSERT_EQ(m.rows, 3 * S) << name;
    ASSERT_EQ(m.cols, S) << name;
    const auto* want = reinterpret_cast<const float*>(npy.data() + m.data_offset);
    double worst = 0;  // in uint8 levels: |difference| * std * 255
    for (int i = 0; i < 3 * S * S; ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(chw[i]) - want[i]) * spec.std[i / (S * S)] * 255);
    EXPECT_LE(worst, 1.0 + 1e-3) << name;
  }
}

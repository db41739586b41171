// The torch-free pytorch_model.bin reader on archives written by the real torch.save (make_torch_checkpoints.py,
// run by the model.torch_fixtures test into BT_TORCHBIN_DIR).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <cstring>
#include <map>
#include <string>

#include "checkpoint/torch_zip.h"
#include "../common/error_of.h"
#include "common/error.h"
#include "fixture_dir.h"

using bt::checkpoint::StoredTensor;
using bt::checkpoint::TorchCheckpoint;
using bt::test::error_of;

namespace {

std::string dir() {
  return BT_TORCHBIN_DIR;
}

}  // namespace

class TorchZip : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::ifstream(dir() + "/dtypes.bin")) FAIL() << "no fixtures in " << dir() << ": run ctest (model.torch_fixtures)";
  }
};

TEST_F(TorchZip, ReadsLayoutsOfTorchSave) {
  auto c = TorchCheckpoint::open(dir() + "/dtypes.bin");
  std::map<std::string, const StoredTensor*> t;
  for (const auto& x : c.tensors()) t[x.rec.name] = &x;
  ASSERT_EQ(t.size(), 8u);
  const auto& s = t.at("f32_strided")->rec;
  EXPECT_EQ(s.dtype, bt::checkpoint::DType::F32);
  EXPECT_EQ(s.shape, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(s.strides, (std::vector<int64_t>{10, 3}));
  EXPECT_EQ(s.storage_offset, 0);
  const auto& a = t.at("f32_shared_a")->rec;
  EXPECT_EQ(a.storage_offset, 10);
  EXPECT_EQ(t.at("f32_shared_a")->storage_id, t.at("f32_strided")->storage_id);
  EXPECT_EQ(t.at("f32_shared_a")->storage, t.at("f32_strided")->storage);
  EXPECT_EQ(t.at("f32_strided")->storage_bytes, 60u * 4);
  EXPECT_EQ(t.at("f16")->rec.dtype, bt::checkpoint::DType::F16);
  EXPECT_EQ(t.at("f16")->rec.strides, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(t.at("bf16")->rec.dtype, bt::checkpoint::DType::BF16);
  EXPECT_EQ(t.at("f64")->rec.dtype, bt::checkpoint::DType::F64);
  EXPECT_EQ(t.at("i64")->rec.dtype, bt::checkpoint::DType::I64);
  int64_t i64[7];
  std::memcpy(i64, t.at("i64")->storage, sizeof i64);
  EXPECT_EQ(i64[0], -5);
  EXPECT_EQ(i64[6], 13);
  EXPECT_TRUE(t.at("scalar")->rec.shape.empty());
  EXPECT_EQ(t.at("empty")->rec.shape, (std::vector<int64_t>{0, 4}));
}

TEST_F(TorchZip, HandmadeArchiveWithAnotherPrefixAndItsZip64Form) {
  for (const char* f : {"good_handmade.bin", "good_zip64.bin"}) {
    auto c = TorchCheckpoint::open(dir() + "/" + f);
    ASSERT_EQ(c.tensors().size(), 1u) << f;
    EXPECT_EQ(c.tensors()[0].rec.storage_offset, 1) << f;
    EXPECT_EQ(c.tensors()[0].rec.shape, (std::vector<int64_t>{3})) << f;
    EXPECT_EQ(c.tensors()[0].storage_bytes, 16u) << f;
  }
}

TEST_F(TorchZip, MalformedArchivesGiveOneLineErrors) {
  const std::map<std::string, std::string> expect = {
      {"bad_truncated.bin", "truncated"},
      {"bad_os_system.bin", "'posix.system'"},
      {"bad_eval.bin", ".eval'"},  // __builtin__.eval in protocol 2
      {"bad_short_storage.bin", "needs 4000 bytes of its storage, which holds only 16"},
      {"bad_absurd_shape.bin", "absurd"},
      {"bad_duplicate_entry.bin", "zip entry 'archive/data/0' appears twice"},
  };
  for (const auto& [file, needle] : expect) {
    const std::string path = dir() + "/" + file;  // clang 14 cannot capture a structured binding
    std::string e = error_of([&] { TorchCheckpoint::open(path); });
    EXPECT_NE(e.find(needle), std::string::npos) << file << ": " << e;
    EXPECT_NE(e.find(file), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST_F(TorchZip, EveryTruncationOfARealArchiveIsAnErrorNotACrash) {
  FILE* f = std::fopen((dir() + "/good_handmade.bin").c_str(), "rb");
  ASSERT_TRUE(f);
  std::vector<uint8_t> bytes(1 << 16);
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_FALSE(error_of([&] { TorchCheckpoint::parse(part.data(), part.size(), "cut"); }).empty()) << n;
  }
}

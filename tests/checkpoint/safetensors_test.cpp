// checkpoint/safetensors.h: the reference fixture parses, the writer round-trips, and every kind of corrupt header is a
// bt::Error (never a crash).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "checkpoint/safetensors.h"
#include "safetensors_image.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "fixture_dir.h"

using namespace bt::checkpoint;

namespace {

std::string image(const std::string& header, size_t data_bytes) {
  return bt::test::safetensors_image(header, data_bytes);
}

std::string parse_error(const std::string& bytes) {
  return bt::test::safetensors_parse_error(bytes, "test.safetensors");
}

std::string tmp(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + std::to_string(getpid()))).string();
}

}  // namespace

TEST(SafeTensors, ReadsReferenceFixture) {
  auto f = SafeTensors::open(std::string(BT_FIXTURE_DIR) + "/inputs.safetensors");
  const TensorView* px = f.find("pixel_values");
  ASSERT_NE(px, nullptr);
  EXPECT_EQ(px->dtype, DType::F32);
  EXPECT_EQ(px->shape, (std::vector<int64_t>{4, 3, 64, 64}));
  EXPECT_EQ(px->nbytes, 4u * 3 * 64 * 64 * 4);
  const TensorView* ids = f.find("input_ids");
  ASSERT_NE(ids, nullptr);
  EXPECT_EQ(ids->dtype, DType::I64);
  int64_t first;
  std::memcpy(&first, ids->data, 8);
  EXPECT_EQ(first, 0);  // bos
  auto m = SafeTensors::open(std::string(BT_FIXTURE_DIR) + "/model.safetensors");
  EXPECT_EQ(m.tensors().size(), 226u);
}

TEST(SafeTensors, WriteReadRoundTripIsHfLayout) {
  std::vector<float> a = {1, 2, 3, 4, 5, 6};
  std::vector<uint16_t> b = {0x3f80, 0x4000, 0x4040};
  std::string path = tmp("bt_st_rt");
  write_safetensors(path, {{"a.weight", DType::F32, {2, 3}, a.data(), 24}, {"b", DType::BF16, {3}, b.data(), 6},
                           {"empty", DType::F32, {0, 4}, nullptr, 0}});
  auto f = SafeTensors::open(path);
  ASSERT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(std::memcmp(f.find("a.weight")->data, a.data(), 24), 0);
  EXPECT_EQ(f.find("b")->dtype, DType::BF16);
  EXPECT_EQ(f.find("empty")->nbytes, 0u);
  std::ifstream in(path, std::ios::binary);
  uint64_t n = 0;
  in.read(reinterpret_cast<char*>(&n), 8);
  EXPECT_EQ(n % 8, 0u);  // header padded with spaces to 8 bytes
  std::string header(n, '\0');
  in.read(header.data(), n);
  EXPECT_EQ(header[header.find_last_not_of(' ')], '}');  // JSON, then only space padding
  EXPECT_FALSE(std::filesystem::exists(bt::atomic_temp_path(path)));
  std::filesystem::remove(path);
}

TEST(SafeTensors, WriterRejectsSizeMismatch) {
  float x = 0;
  EXPECT_THROW(write_safetensors(tmp("bt_st_bad"), {{"x", DType::F32, {2}, &x, 4}}), bt::Error);
}

TEST(SafeTensors, CorruptHeadersAreErrors) {
  const std::string ok = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_EQ(parse_error(image(ok, 8)), "");
  EXPECT_NE(parse_error("abc").find("shorter"), std::string::npos);
  std::string huge = image(ok, 8);
  huge[5] = 1;  // header length way beyond the file
  EXPECT_NE(parse_error(huge).find("exceeds"), std::string::npos);
  EXPECT_NE(parse_error(image("{not json", 0)).find("JSON"), std::string::npos);
  EXPECT_NE(parse_error(image("[1,2]", 0)).find("object"), std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", 8)).find("dtype"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8)).find("shape"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4)).find("exceed"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8)).find("data_offsets"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8)).find("shape"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8))
                .find("shape"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                              8))
                .find("overlap"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"F32","shape":[2]}})", 8)).find("lacks"), std::string::npos);
  EXPECT_NE(parse_error(image(R"({"__metadata__":{"a":1}})", 0)).find("__metadata__"), std::string::npos);
  EXPECT_NE(parse_error(image(std::string(100, '[') + std::string(100, ']'), 0)).find("nests"), std::string::npos);
}

TEST(SafeTensors, IndexRejectsPathsOutsideTheDirectory) {
  std::string path = tmp("bt_st_index");
  std::ofstream(path) << R"({"weight_map":{"a":"model-1.safetensors","b":"model-2.safetensors"}})";
  auto m = read_safetensors_index(path);
  EXPECT_EQ(m.at("b"), "model-2.safetensors");
  std::ofstream(path) << R"({"weight_map":{"a":"../etc/passwd"}})";
  EXPECT_THROW(read_safetensors_index(path), bt::Error);
  std::ofstream(path) << R"({"nothing":1})";
  EXPECT_THROW(read_safetensors_index(path), bt::Error);
  std::filesystem::remove(path);
  EXPECT_THROW(SafeTensors::open(path), bt::Error);
}

// Safetensors header budgets: the header length is capped, and the header is parsed without a DOM, entry by
// entry, so a header of many tiny or unknown entries is refused at its first bad entry instead of costing ~20x
// its size first (a 30 MB header of {} entries took 1.24 GB).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>

#include "checkpoint/safetensors.h"
#include "safetensors_image.h"
#include "common/error.h"

using namespace bt::checkpoint;

namespace {

std::string image(const std::string& header, size_t data_bytes) {
  return bt::test::safetensors_image(header, data_bytes);
}

std::string parse_error(const std::string& bytes) {
  return bt::test::safetensors_parse_error(bytes, "m.safetensors");
}

size_t peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return size_t(ru.ru_maxrss) / 1024;
}

TEST(SafeTensorsBudget, HeaderLengthIsCapped) {
  std::string b(8, '\0');
  const uint64_t n = (uint64_t(16) << 20) + 1;
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  b += std::string(size_t(n), ' ');
  EXPECT_EQ(parse_error(b).rfind("safetensors m.safetensors: header length 16777217 exceeds the limit of 16777216 bytes", 0),
            0u);
}

TEST(SafeTensorsBudget, ManyEmptyEntriesAreRefusedAtTheFirst) {
  // 15 MiB of {"0":{},"1":{},...}: the first entry lacks its fields; nothing else of the header is kept.
  std::string h = "{";
  for (size_t k = 0; h.size() < (size_t(15) << 20); ++k) h.append("\"").append(std::to_string(k)).append("\":{},");
  h.back() = '}';
  const size_t before = peak_rss_mb();
  const std::string img = image(h, 0);
  EXPECT_EQ(parse_error(img).rfind("safetensors m.safetensors: entry '0' lacks dtype, shape or data_offsets", 0), 0u);
  EXPECT_LT(peak_rss_mb(), before + 60) << "the header was held as a DOM";
}

TEST(SafeTensorsBudget, UnknownFieldsAreSkippedNotStored) {
  // One entry with 10 MiB of unknown keys: still parsed (the keys are ignored, as before), without a DOM.
  std::string junk;
  for (size_t k = 0; junk.size() < (size_t(10) << 20); ++k) junk.append("\"u").append(std::to_string(k)).append("\":[1,{}],");
  const std::string h = "{\"x\":{" + junk + "\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  const size_t before = peak_rss_mb();
  const std::string img = image(h, 8);
  EXPECT_EQ(parse_error(img), "");
  EXPECT_LT(peak_rss_mb(), before + 60) << "unknown fields were kept";
}

TEST(SafeTensorsBudget, EntriesAreCheckedAsTheyClose) {
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", 16))
                .find("tensor 'x' is named twice"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"F32","shape":[[2]],"data_offsets":[0,8]}})", 8)).find("bad shape"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8,9]}})", 8)).find("data_offsets"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":{"dtype":["F32"],"shape":[2],"data_offsets":[0,8]}})", 8)).find("dtype"),
            std::string::npos);
  EXPECT_NE(parse_error(image(R"({"x":5})", 0)).find("entry 'x' is not an object"), std::string::npos);
  EXPECT_NE(parse_error(image(R"({"__metadata__":{"a":{"b":"c"}}})", 0)).find("__metadata__ value of 'a'"),
            std::string::npos);
  std::string meta = "{\"__metadata__\":{";
  for (int k = 0; k < 5000; ++k) meta.append("\"k").append(std::to_string(k)).append("\":\"v\",");
  meta.back() = '}';
  EXPECT_NE(parse_error(image(meta + "}", 0)).find("__metadata__ holds more than 4096 entries"), std::string::npos);
  // A valid header with metadata and unknown fields parses as before.
  const std::string ok =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8],"extra":null},)"
      R"("b":{"dtype":"I64","shape":[],"data_offsets":[8,16]}})";
  const std::string img = image(ok, 16);
  SafeTensors st = SafeTensors::parse(reinterpret_cast<const uint8_t*>(img.data()), img.size(), "ok");
  ASSERT_EQ(st.tensors().size(), 2u);
  EXPECT_EQ(st.metadata().at("format"), "pt");
  EXPECT_EQ(st.find("a")->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(st.find("b")->nbytes, 8u);
  EXPECT_TRUE(st.find("b")->shape.empty());
}

}  // namespace

// libFuzzer target for the parquet reader: the input is a whole parquet file in memory. It is opened, every
// flat column of every row group is decoded, and it is opened as a ParquetDataset (image struct and plain
// binary image column) whose images are all read. Any outcome but success or bt::Error is a bug.
// Seeds: fuzz/corpus/fuzz_parquet/ (the test fixtures).
#include <cstddef>
#include <cstdint>

#include "common/error.h"
#include "parquet/parquet_dataset.h"

using namespace bt::parquet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto src = memory_source(data, size, "fuzz.parquet");
  try {
    ParquetFile pf(src);
    for (size_t g = 0; g < pf.num_row_groups(); ++g)
      for (size_t c = 0; c < pf.schema().leaves.size(); ++c) {
        try {
          ColumnValues v = pf.read_column(g, c);
          if (v.type == Type::ByteArray && v.num_rows) (void)v.bytes(v.num_rows - 1);
        } catch (const bt::Error&) {
        }
      }
  } catch (const bt::Error&) {
  }
  for (const char* image : {"image", "image.bytes"}) {
    try {
      ParquetDatasetOptions o;
      o.image_column = image;
      o.caption_column = "image_description";
      o.cache_mb = 1;
      ParquetDataset ds({src}, o);
      std::vector<uint8_t> b;
      for (size_t i = 0; i < ds.size(); ++i) {
        (void)ds.caption(i);
        (void)ds.image_key(i);
        (void)ds.describe(i);
        try {
          ds.read_image(i, b);
        } catch (const bt::Error&) {
        }
      }
    } catch (const bt::Error&) {
    }
  }
  return 0;
}

// libFuzzer target for the parquet reader: the input is a whole parquet file in memory. It is opened, every
// column (flat, struct field or list) of every row group is decoded and its row/list offsets checked, and it is opened as a ParquetDataset (image struct and plain
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
          const bool list = !v.list_begin.empty();
          const size_t values = list ? v.present.size() : v.num_rows;
          if (list && (v.list_begin.size() != v.num_rows + 1 || v.list_begin.front() != 0 || v.list_begin.back() != values))
            __builtin_trap();
          for (size_t r = 0; list && r < v.num_rows; ++r)
            if (v.list_begin[r] > v.list_begin[r + 1]) __builtin_trap();
          if (v.type == Type::ByteArray && values) (void)v.bytes(values - 1);
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

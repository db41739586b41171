// Page decompression for the codecs HF parquet files use: UNCOMPRESSED, SNAPPY, GZIP, ZSTD. The output must
// be exactly `uncompressed_size` bytes, else bt::Error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "parquet/metadata.h"

namespace bt::parquet {

void decompress(Codec codec, const uint8_t* src, size_t src_size, uint8_t* dst, size_t uncompressed_size);

// Guards allocations driven by untrusted header sizes: a page can not legitimately expand more than this.
size_t max_uncompressed_size(size_t compressed_size);

}  // namespace bt::parquet

#include "parquet/decompress.h"

#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "common/error.h"

namespace bt::parquet {

size_t max_uncompressed_size(size_t compressed_size) {
  // Levels and dictionary indices are RLE-encoded already, so real pages compress far less than 1:1024.
  return std::max<size_t>(size_t(1) << 20, compressed_size * 1024);
}

void decompress(Codec codec, const uint8_t* src, size_t n, uint8_t* dst, size_t out_size) {
  switch (codec) {
    case Codec::Uncompressed:
      if (n != out_size) fail("uncompressed page holds ", n, " bytes, header says ", out_size);
      if (n) std::memcpy(dst, src, n);
      return;
    case Codec::Snappy: {
      size_t len = 0;
      if (!snappy::GetUncompressedLength(reinterpret_cast<const char*>(src), n, &len))
        fail("corrupt snappy page");
      if (len != out_size) fail("snappy page expands to ", len, " bytes, header says ", out_size);
      if (!snappy::RawUncompress(reinterpret_cast<const char*>(src), n, reinterpret_cast<char*>(dst)))
        fail("corrupt snappy page");
      return;
    }
    case Codec::Zstd: {
      size_t got = ZSTD_decompress(dst, out_size, src, n);
      if (ZSTD_isError(got)) fail("corrupt zstd page: ", ZSTD_getErrorName(got));
      if (got != out_size) fail("zstd page expands to ", got, " bytes, header says ", out_size);
      return;
    }
    case Codec::Gzip: {
      z_stream zs{};
      if (inflateInit2(&zs, 15 + 32) != Z_OK) fail("zlib init failed");  // +32: gzip or zlib header
      zs.next_in = const_cast<Bytef*>(src);
      zs.avail_in = static_cast<uInt>(n);
      zs.next_out = dst;
      zs.avail_out = static_cast<uInt>(out_size);
      int rc = inflate(&zs, Z_FINISH);
      size_t got = out_size - zs.avail_out;
      inflateEnd(&zs);
      if (rc != Z_STREAM_END) fail("corrupt or oversized gzip page (zlib error ", rc, ")");
      if (got != out_size) fail("gzip page expands to ", got, " bytes, header says ", out_size);
      return;
    }
    default:
      fail("compression codec ", codec_name(codec), " is not supported (use SNAPPY, ZSTD, GZIP or none)");
  }
}

}  // namespace bt::parquet

// A build without libcurl (CMake found none): http(s):// shards fail with one line saying what to do.
#include "common/error.h"
#include "data/byte_stream.h"

namespace bt::data {

bool have_http_streams() { return false; }

std::unique_ptr<ByteStream> open_http_stream(const std::string& url, const StreamOptions&) {
  fail(url, ": this build has no libcurl (install libcurl4-openssl-dev and rebuild), or read the shards with "
       "pipe:curl -sf URL");
}

}  // namespace bt::data

// Any bytes as a WebDataset shard, through libarchive and the member grouping: samples or bt::Error only.
#include <cstddef>
#include <cstdint>

#include "common/error.h"
#include "data/captions_parse.h"
#include "data/shard_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (auto mode : {bt::data::OnBad::kError, bt::data::OnBad::kSkip}) {
    bt::data::ShardOptions o;
    o.on_bad = mode;
    o.max_member_bytes = 1 << 20;
    try {
      auto r = bt::data::ShardReader::open_memory(data, size, "fuzz.tar", o);
      bt::data::TarSample s;
      while (r->next(s))
        if (s.image.empty() || s.caption.empty() || !bt::data::valid_utf8(s.caption)) __builtin_trap();
    } catch (const bt::Error&) {
    }
    try {
      bt::data::ShardReader::open_memory(data, size, "fuzz.tar", o)->count_remaining();
    } catch (const bt::Error&) {
    }
    // TarDataset's indexing pass. Odd members (e.g. GNU sparse files) may get offsets that do not match the
    // bytes; TarDataset checks each against the file, so only memory safety is asserted here.
    o.index_only = true;
    try {
      auto r = bt::data::ShardReader::open_memory(data, size, "fuzz.tar", o);
      bt::data::TarSample s;
      while (r->next(s))
        if (s.image_size == 0) __builtin_trap();
    } catch (const bt::Error&) {
    }
  }
  return 0;
}

// One batch as the loader delivers it. Pixel buffers are 64-byte aligned, contiguous and owned by the
// loader's pool: they are reused across steps (no allocation in the steady state) and libtorch can wrap
// them with from_blob (and pin them) without a copy. A Batch is handed out as a BatchPtr; destroying the
// BatchPtr gives the buffers back to the loader, which must outlive it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/aligned_buffer.h"
#include "loader/decoded_batch.h"

namespace bt::loader {

// Seconds summed over the batch's samples (worker time), except wait_s: how long the consumer's next()
// blocked for this batch.
struct BatchTiming {
  double read_s = 0;       // Dataset::read_image
  double decode_s = 0;     // image decode (any format; a PNG's includes its row-streamed resize)
  double transform_s = 0;  // resize + crop (+ flip)
  double normalize_s = 0;  // uint8 HWC -> float CHW into the batch (plus cache copies)
  double wait_s = 0;
};

struct Batch {
  uint64_t epoch = 0;
  size_t index = 0;         // batch number within the epoch (the step when one batch is one step)
  size_t first_sample = 0;  // position of sample 0 in this rank's epoch order
  int size = 0;             // B: rows in this batch (the last batch of an epoch may be short)
  int image_size = 0;       // H == W
  AlignedBuffer<float> pixels;        // [B,3,H,W] normalised (empty when the loader produces u8 only)
  AlignedBuffer<uint8_t> pixels_u8;   // [B,H,W,3] before normalisation (only when requested)
  DecodedBatch decoded;               // decode-only mode: packed RGB8 images + crop geometry (else empty)
  std::vector<std::string> captions;  // [B]
  std::vector<std::string> image_keys;
  std::vector<size_t> rows;           // dataset row of each sample
  BatchTiming timing;
  size_t cache_hits = 0;
  size_t skipped = 0;  // bad samples replaced in this batch (on_bad_sample=skip)
  size_t decoded_with_warnings = 0;  // samples whose decoder warned (LoaderStats::decoded_with_warnings)
};

class BatchPool;
struct BatchRecycler {
  BatchPool* pool = nullptr;
  void operator()(Batch* b) const;
};
using BatchPtr = std::unique_ptr<Batch, BatchRecycler>;

}  // namespace bt::loader

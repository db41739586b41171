// The loader runs transform_to_u8 in many threads at once (one MediaScratch each): results must equal the
// single-threaded ones, and TSan (make test-tsan, label `threads`) must find no race in the media path
// (thread-local TurboJPEG handles, Highway's one-time dispatch, the shared read-only inputs).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "common/error.h"
#include "media/transform.h"
#include "media_test_util.h"

namespace bt::media {
namespace {
using namespace testing;

TEST(MediaThreads, ConcurrentTransformsMatchSerial) {
  const std::vector<std::vector<uint8_t>> inputs = {read_bytes(golden_path("cartoon_300x301.jpg")),
                                                    read_bytes(golden_path("cartoon_17x9.png")),
                                                    read_bytes(golden_path("cmyk.jpg")),
                                                    read_bytes(golden_path("progressive.jpg"))};
  const std::vector<uint8_t> junk(100, 0xFF);  // errors interleaved with successes
  TransformSpec spec;
  spec.image_size = 48;
  spec.mode = TransformMode::kTrain;
  const size_t out_size = size_t(48) * 48 * 3;
  constexpr int kJobs = 64;
  std::vector<std::vector<uint8_t>> serial(kJobs, std::vector<uint8_t>(out_size));
  auto scratch = make_scratch();
  for (int j = 0; j < kJobs; ++j) transform_to_u8(inputs[j % inputs.size()], spec, j, serial[j].data(), *scratch);

  std::vector<std::vector<uint8_t>> par(kJobs, std::vector<uint8_t>(out_size));
  std::vector<int> errors(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto s = make_scratch();
      for (int j = t; j < kJobs; j += 4) {
        transform_to_u8(inputs[j % inputs.size()], spec, j, par[j].data(), *s);
        try {
          transform_to_u8(junk, spec, j, par[j].data(), *s);
        } catch (const bt::Error&) {
          ++errors[t];
        }
        // A failed call may have written to its output: the next good call must still be exact.
        transform_to_u8(inputs[j % inputs.size()], spec, j, par[j].data(), *s);
      }
    });
  for (auto& th : threads) th.join();
  for (int j = 0; j < kJobs; ++j) EXPECT_EQ(par[j], serial[j]) << j;
  for (int e : errors) EXPECT_EQ(e, kJobs / 4);
}

}  // namespace
}  // namespace bt::media

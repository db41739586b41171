// The decode workers' priority (loader/worker_priority.h): set on the worker's own thread id, relative to the
// thread that starts it, and applied by the Loader to every worker it starts.
#include "loader/worker_priority.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <thread>

#include "fake.h"
#include "loader/loader.h"

namespace bt::loader {
namespace {

TEST(WorkerPriority, RaisesTheThreadsNiceOnly) {
  const int base = current_thread_nice();
  if (base > 16) GTEST_SKIP() << "this process already runs at nice " << base;
  int in_thread = -100;
  std::string why = "not run";
  std::thread t([&] {
    why = apply_worker_priority({3, false}, 1);
    in_thread = current_thread_nice();
  });
  t.join();
  EXPECT_EQ(why, "");
  EXPECT_EQ(in_thread, base + 3);
  EXPECT_EQ(current_thread_nice(), base);  // the starting thread keeps its own
}

TEST(WorkerPriority, NiceZeroAndAffinityWithFewCpusChangeNothing) {
  std::thread t([] {
    const int before = current_thread_nice();
    cpu_set_t a, b;
    sched_getaffinity(0, sizeof a, &a);
    EXPECT_EQ(apply_worker_priority({0, true}, 4096), "");  // more workers than CPUs: all CPUs kept
    sched_getaffinity(0, sizeof b, &b);
    EXPECT_EQ(current_thread_nice(), before);
    EXPECT_EQ(CPU_COUNT(&a), CPU_COUNT(&b));
  });
  t.join();
}

TEST(WorkerPriority, AffinityLeavesTheFirstCpu) {
  cpu_set_t own;
  sched_getaffinity(0, sizeof own, &own);
  if (CPU_COUNT(&own) < 2) GTEST_SKIP() << "one CPU";
  int first = 0;
  while (!CPU_ISSET(first, &own)) ++first;
  std::thread t([&] {
    EXPECT_EQ(apply_worker_priority({0, true}, 1), "");
    cpu_set_t now;
    sched_getaffinity(0, sizeof now, &now);
    EXPECT_FALSE(CPU_ISSET(first, &now));
    EXPECT_EQ(CPU_COUNT(&now), CPU_COUNT(&own) - 1);
  });
  t.join();
}

// The Loader's workers run at the nice value asked for: the transform reads it on the thread that decodes.
class NiceRecordingTransform : public test::FakeTransform {
 public:
  explicit NiceRecordingTransform(std::atomic<int>* seen) : seen_(seen) {}
  void to_u8(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t seed, uint8_t* out,
             media::TransformTiming* timing) override {
    seen_->store(current_thread_nice());
    FakeTransform::to_u8(encoded, spec, seed, out, timing);
  }

 private:
  std::atomic<int>* seen_;
};

TEST(WorkerPriority, LoaderWorkersRunAtTheNiceAsked) {
  const int base = current_thread_nice();
  if (base > 15) GTEST_SKIP() << "this process already runs at nice " << base;
  std::atomic<int> seen{-100};
  LoaderOptions o;
  o.num_workers = 2;
  o.batch_size = 4;
  o.transform.image_size = 4;
  o.decoded_cache_mb = 0;
  o.worker_priority.nice = 4;
  o.transform_factory = [&seen] { return std::unique_ptr<SampleTransform>(new NiceRecordingTransform(&seen)); };
  Loader loader(std::make_shared<test::FakeDataset>(8, 8), o);
  loader.start_epoch(0);
  ASSERT_NE(loader.next(), nullptr);
  EXPECT_EQ(seen.load(), base + 4);
  EXPECT_EQ(current_thread_nice(), base);  // the consumer (the step's thread) is untouched
}

}  // namespace
}  // namespace bt::loader

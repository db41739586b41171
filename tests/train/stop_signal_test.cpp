// Stop signals (train/stop_signal.h), each case in a child process (gtest death tests): before the step loop a
// signal stops at once; once armed it is a request, repeated within kSameRequestSeconds it is the same request, and
// a later one stops at once.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "train/stop_signal.h"

using namespace bt::train;

namespace {

bool wait_for_request() {
  for (int i = 0; i < 200 && !stop_signal_received(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return stop_signal_received() == SIGTERM;
}

}  // namespace

TEST(StopSignal, BeforeTheStepLoopASignalStopsAtOnceSayingSo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_stop_signals();
        kill(getpid(), SIGTERM);
        std::this_thread::sleep_for(std::chrono::seconds(5));
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "before training began: nothing to save");
}

TEST(StopSignal, RepeatsWithinTheWindowAreTheSameRequest) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_stop_signals();
        arm_stop_signals();
        kill(getpid(), SIGTERM);
        if (!wait_for_request()) std::exit(1);
        kill(getpid(), SIGTERM);  // a launcher forwarding what the process group already got
        kill(getpid(), SIGTERM);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        std::exit(stop_signal_received() == SIGTERM ? 7 : 2);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST(StopSignal, ASecondSignalAfterTheWindowStopsAtOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_stop_signals();
        arm_stop_signals();
        kill(getpid(), SIGTERM);
        if (!wait_for_request()) std::exit(1);
        std::this_thread::sleep_for(std::chrono::duration<double>(kSameRequestSeconds + 0.2));
        kill(getpid(), SIGTERM);
        std::this_thread::sleep_for(std::chrono::seconds(5));
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
}

// dist/env.h parsing and the watchdog (torch-free: runs in every configuration, sanitizers included).
#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "common/error.h"
#include "dist/env.h"
#include "dist/watchdog.h"

namespace bt::dist {
namespace {

DistEnv parse(const std::map<std::string, std::string>& vars) {
  return read_env([&](const char* k) -> const char* {
    auto it = vars.find(k);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    parse(vars);
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "";
}

TEST(DistEnv, NothingSetIsOneProcess) {
  DistEnv e = parse({});
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.rank, 0);
  EXPECT_FALSE(e.distributed());
  EXPECT_TRUE(e.is_main());
  EXPECT_FALSE(parse({{"WORLD_SIZE", "1"}, {"RANK", "0"}}).distributed());
}

TEST(DistEnv, TorchrunStaticRendezvous) {
  DistEnv e = parse({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
                     {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"},
                     {"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "2"}});
  EXPECT_TRUE(e.distributed());
  EXPECT_FALSE(e.is_main());
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 4);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_EQ(e.master_addr, "10.0.0.1");
  EXPECT_EQ(e.master_port, 29500);
  EXPECT_TRUE(e.agent_store);
  EXPECT_EQ(e.restart_count, 2);
  EXPECT_NE(e.describe().find("rank 3/4"), std::string::npos);
}

TEST(DistEnv, ByHandDefaultsLocalToGlobal) {
  DistEnv e = parse({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1234"}});
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_FALSE(e.agent_store);
}

TEST(DistEnv, ClearErrors) {
  const std::map<std::string, std::string> ok = {
      {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1234"}};
  auto with = [&](const std::string& k, const std::string& v) {
    auto m = ok;
    if (v.empty())
      m.erase(k);
    else
      m[k] = v;
    return error_of(m);
  };
  EXPECT_EQ(error_of(ok), "");
  EXPECT_NE(with("RANK", "").find("RANK is not"), std::string::npos);
  EXPECT_NE(with("RANK", "2").find("below WORLD_SIZE"), std::string::npos);
  EXPECT_NE(with("RANK", "x").find("RANK='x'"), std::string::npos);
  EXPECT_NE(with("WORLD_SIZE", "0").find("WORLD_SIZE='0'"), std::string::npos);
  EXPECT_NE(with("MASTER_ADDR", "").find("MASTER_ADDR"), std::string::npos);
  EXPECT_NE(with("MASTER_PORT", "").find("MASTER_PORT"), std::string::npos);
  EXPECT_NE(with("MASTER_PORT", "70000").find("MASTER_PORT='70000'"), std::string::npos);
  EXPECT_NE(with("LOCAL_WORLD_SIZE", "3").find("LOCAL_WORLD_SIZE"), std::string::npos);
  EXPECT_NE(with("TORCHELASTIC_USE_AGENT_STORE", "yes").find("True or False"), std::string::npos);
  EXPECT_NE(error_of({{"RANK", "1"}}).find("WORLD_SIZE is not"), std::string::npos);
  EXPECT_NE(error_of({{"RANK", "1"}, {"WORLD_SIZE", "1"}}).find("RANK must be 0"), std::string::npos);
}

// Operations that each end within the limit, though together they last longer than it, leave the process
// running: the child exits 0 itself (a watchdog abort would exit 3 with a "made no progress" line).
TEST(Watchdog, QuietWhileOperationsFinish) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w("rank 0/2", 0.5, 0.02);
        for (int i = 0; i < 15; ++i) {
          const auto id = w.begin("all_reduce");
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          w.end(id);
        }
        std::fprintf(stderr, "all operations finished\n");
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "all operations finished");
}

TEST(WatchdogDeathTest, AbortsAStuckOperation) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w("rank 1/2", 0.1, 0.02);
        w.begin("gradient all_reduce");
        std::this_thread::sleep_for(std::chrono::seconds(10));
      },
      ::testing::ExitedWithCode(3), "rank 1/2: gradient all_reduce made no progress");
}

}  // namespace
}  // namespace bt::dist

// The probe behind "torchrun's store does not answer": a listening port answers at once; a closed one is reported
// (with why) once the retries run out.
TEST(StoreProbe, ALiveStoreAnswersAndADeadOneIsReported) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof a;
  getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  EXPECT_EQ(bt::dist::store_unreachable("127.0.0.1", port, 2.0), "");
  ::close(listener);  // nothing listens there any more
  const auto t0 = std::chrono::steady_clock::now();
  const std::string why = bt::dist::store_unreachable("127.0.0.1", port, 0.3);
  EXPECT_NE(why, "");
  EXPECT_NE(why.find("refused"), std::string::npos) << why;
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
}

// common/runtime.h: every environment switch read once, one prefix, the old BT_FUSED_OPS still read with one
// warning; a bad value keeps the default and says so; tests override the switches in-process, not via setenv.
#include "common/runtime.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <string>

namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  bt::EnvLookup lookup() const {
    return [this](const char* n) -> const char* {
      auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

}  // namespace

TEST(RuntimeSwitches, DefaultsWhenNothingIsSet) {
  std::vector<std::string> warnings;
  const bt::RuntimeSwitches s = bt::read_runtime_switches(FakeEnv{}.lookup(), &warnings);
  EXPECT_TRUE(s.keep_freed_memory);
  EXPECT_TRUE(s.cpu_gemm_onednn);
  EXPECT_EQ(s.fused_ops, bt::FusedOps::kOn);
  EXPECT_TRUE(warnings.empty());
}

TEST(RuntimeSwitches, EachSwitchUnderItsName) {
  FakeEnv env{{{"BRIDGETUNE_KEEP_FREED_MEMORY", "0"}, {"BRIDGETUNE_CPU_GEMM", "torch"},
               {"BRIDGETUNE_FUSED_OPS", "fail"}}};
  std::vector<std::string> warnings;
  const bt::RuntimeSwitches s = bt::read_runtime_switches(env.lookup(), &warnings);
  EXPECT_FALSE(s.keep_freed_memory);
  EXPECT_FALSE(s.cpu_gemm_onednn);
  EXPECT_EQ(s.fused_ops, bt::FusedOps::kFail);
  EXPECT_TRUE(warnings.empty());
  env.vars["BRIDGETUNE_FUSED_OPS"] = "0";
  EXPECT_EQ(bt::read_runtime_switches(env.lookup()).fused_ops, bt::FusedOps::kOff);
}

TEST(RuntimeSwitches, OldFusedOpsNameStillWorksWithOneWarning) {
  FakeEnv env{{{"BT_FUSED_OPS", "0"}}};
  std::vector<std::string> warnings;
  EXPECT_EQ(bt::read_runtime_switches(env.lookup(), &warnings).fused_ops, bt::FusedOps::kOff);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("BT_FUSED_OPS is deprecated: set BRIDGETUNE_FUSED_OPS=0"), std::string::npos)
      << warnings[0];
  env.vars["BRIDGETUNE_FUSED_OPS"] = "fail";  // both: the new name wins
  warnings.clear();
  EXPECT_EQ(bt::read_runtime_switches(env.lookup(), &warnings).fused_ops, bt::FusedOps::kFail);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("ignored"), std::string::npos) << warnings[0];
}

TEST(RuntimeSwitches, ABadValueKeepsTheDefaultAndSaysSo) {
  FakeEnv env{{{"BRIDGETUNE_CPU_GEMM", "mkl"}, {"BRIDGETUNE_KEEP_FREED_MEMORY", "yes\x1b[2J"}}};
  std::vector<std::string> warnings;
  const bt::RuntimeSwitches s = bt::read_runtime_switches(env.lookup(), &warnings);
  EXPECT_TRUE(s.cpu_gemm_onednn);
  EXPECT_TRUE(s.keep_freed_memory);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[1].find("BRIDGETUNE_CPU_GEMM=mkl is not one of onednn | torch; using onednn"), std::string::npos)
      << warnings[1];
}

// Every switch in the table has the one prefix, a default and a description, and docs/RUNTIME.md lists it.
TEST(RuntimeSwitches, TheTableUsesOnePrefixAndTheDocsListIt) {
  std::ifstream in(BT_RUNTIME_DOC);
  ASSERT_TRUE(in) << BT_RUNTIME_DOC;
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& spec : bt::kRuntimeSwitchTable) {
    EXPECT_EQ(std::string(spec.name).rfind("BRIDGETUNE_", 0), 0u) << spec.name;
    EXPECT_NE(std::string(spec.what), "") << spec.name;
    EXPECT_NE(std::string(spec.values).find(spec.default_value), std::string::npos) << spec.name;
    EXPECT_NE(doc.find(std::string("| `") + spec.name + "` | `" + spec.default_value + "` |"), std::string::npos)
        << spec.name << " (default " << spec.default_value << ") is not in the table of " << BT_RUNTIME_DOC;
  }
}

TEST(RuntimeSwitches, ScopedOverrideRestoresThePrevious) {
  const bt::RuntimeSwitches before = bt::runtime_switches();
  {
    bt::RuntimeSwitches s = before;
    s.fused_ops = bt::FusedOps::kFail;
    s.cpu_gemm_onednn = !before.cpu_gemm_onednn;
    const bt::ScopedRuntimeSwitches scope(s);
    EXPECT_EQ(bt::runtime_switches().fused_ops, bt::FusedOps::kFail);
    EXPECT_EQ(bt::runtime_switches().cpu_gemm_onednn, !before.cpu_gemm_onednn);
  }
  EXPECT_EQ(bt::runtime_switches().fused_ops, before.fused_ops);
  EXPECT_EQ(bt::runtime_switches().cpu_gemm_onednn, before.cpu_gemm_onednn);
}

// BRIDGETUNE_MAX_THREADS caps torch's threads (the suite runs at 1 and 2 under it); a bad count warns, no cap.
TEST(RuntimeSwitches, MaxThreadsIsACountAndCaps) {
  FakeEnv env{{{"BRIDGETUNE_MAX_THREADS", "1"}}};
  EXPECT_EQ(bt::read_runtime_switches(env.lookup()).max_threads, 1);
  EXPECT_EQ(bt::read_runtime_switches(FakeEnv{}.lookup()).max_threads, 0);
  for (const char* bad : {"-1", "256", "2x", "1e3", " 2"}) {
    env.vars["BRIDGETUNE_MAX_THREADS"] = bad;
    std::vector<std::string> warnings;
    EXPECT_EQ(bt::read_runtime_switches(env.lookup(), &warnings).max_threads, 0) << bad;
    ASSERT_EQ(warnings.size(), 1u) << bad;
    EXPECT_NE(warnings[0].find("is not one of 0 | 1..255; using 0"), std::string::npos) << warnings[0];
  }
  bt::RuntimeSwitches s = bt::runtime_switches();
  s.max_threads = 2;
  const bt::ScopedRuntimeSwitches scope(s);
  EXPECT_EQ(bt::capped_threads(16), 2);
  EXPECT_EQ(bt::capped_threads(1), 1);
  EXPECT_GE(bt::available_cores(), 1);
}

// Budgets of the state-dict unpickler: a small pickle cannot nest containers without bound or make memory grow
// far beyond its size (one opcode byte makes one value; a 4 MB pickle of nested TUPLE1 took 1.31 GB).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "checkpoint/torch_pickle.h"
#include "common/error.h"

namespace {

std::string unpickle_error(const std::string& body) {
  const std::string p = "\x80\x02" + body + ".";
  try {
    bt::checkpoint::unpickle_state_dict(reinterpret_cast<const uint8_t*>(p.data()), p.size(), "data.pkl");
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TorchPickle, NestingDepthIsBounded) {
  // None wrapped in TUPLE1 (0x85) 150 times, and lists appended into lists: refused at depth 100.
  std::string e = unpickle_error("N" + std::string(150, '\x85'));
  EXPECT_EQ(e.rfind("data.pkl: containers nest deeper than 100 levels", 0), 0u) << e;
  e = unpickle_error(std::string(150, ']') + std::string(149, 'a'));
  EXPECT_EQ(e.rfind("data.pkl: containers nest deeper than 100 levels", 0), 0u) << e;
  // 50 levels are allowed (the pickle then fails for not being a state dict).
  EXPECT_EQ(unpickle_error("N" + std::string(50, '\x85')), "data.pkl: the pickle is not a state dict (a dict of tensors)");
}

TEST(TorchPickle, MemoryIsBoundedByThePickleSize) {
  // 3 MB of NONE opcodes inside one list: 3M values. The budget (64 MiB, or 32 bytes per pickle byte) stops it.
  const std::string e = unpickle_error("](" + std::string(size_t(3) << 20, 'N') + "e");
  EXPECT_EQ(e.rfind("data.pkl: unpickling needs more than 96 MiB, more than a 3145734-byte pickle can justify", 0), 0u)
      << e;
  // A memoised empty tuple after each: the memo counts too.
  std::string memo = "(";
  for (int i = 0; i < (1 << 20); ++i) memo += ")\x94";
  EXPECT_NE(unpickle_error(memo + "l").find("unpickling needs more than 64 MiB"), std::string::npos);
}

// Real torch.save pickles within the budgets: TorchZip.* and TorchBin.* (written by the real torch.save).

}  // namespace

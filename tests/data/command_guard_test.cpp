// Issue 53, item 1: a pipe: location runs only when the user typed it (data/user_command.h). Every reader of the
// data layer that takes a location out of a file or a file listing is tried with a canary command (one that would
// create a file): the file must not exist afterwards and the refusal must name where the value came from.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../common/error_of.h"
#include "../common/user_typed.h"
#include "data/byte_stream.h"
#include "data/captions_dataset.h"
#include "data/shard_stream.h"
#include "data/streamed_dataset.h"
#include "test_util.h"

using namespace bt::data;
using bt::data::testing::TempDir;
using bt::data::testing::write_file;
using bt::test::error_of;

namespace {

namespace fs = std::filesystem;

class CommandGuard : public ::testing::Test {
 protected:
  // A command that would leave `canary_` behind if it ever ran.
  std::string canary_command() const { return "pipe:touch " + canary_ + "; cat /dev/null"; }
  bool ran() const { return fs::exists(canary_); }

  TempDir dir_;
  std::string canary_ = dir_ / "canary";
};

// Runs f in `dir` (glob patterns and captions files are relative to the working folder).
void in_folder(const std::string& dir, const std::function<void()>& f) {
  const fs::path was = fs::current_path();
  fs::current_path(dir);
  f();
  fs::current_path(was);
}

TEST_F(CommandGuard, AnUndeclaredCommandIsNeverStartedAndIsNamed) {
  const std::string cmd = canary_command();
  const std::string e = error_of([&] { open_byte_stream(cmd); });
  EXPECT_EQ(e.rfind("pipe:touch " + canary_, 0), 0u) << e;
  EXPECT_NE(e.find("runs only when you type it"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // Every entry point above the stream: shards read whole, a shard list, the dataset factory, under skip too.
  ShardOptions skip;
  skip.on_bad = OnBad::kSkip;
  EXPECT_NE(error_of([&] { StreamedDataset::open({cmd}); }).find("runs only when you type it"), std::string::npos);
  EXPECT_NE(error_of([&] { open_dataset(cmd); }).find("runs only when you type it"), std::string::npos);
  ShardStream list({cmd, cmd}, skip);
  TarSample t;
  EXPECT_FALSE(list.next(t));
  EXPECT_EQ(list.bad().count, 2u);
  EXPECT_FALSE(ran());
  // The same command once the user typed it (a brace pattern of them: each expansion runs).
  const std::string typed_pattern = bt::test::typed("pipe:echo -n > " + dir_ / "ran-{1..2}");
  for (const std::string& loc : expand_shard_pattern(typed_pattern)) ShardStream({loc}, skip).next(t);
  EXPECT_TRUE(fs::exists(dir_ / "ran-1") && fs::exists(dir_ / "ran-2"));
}

TEST_F(CommandGuard, AGlobMatchNamedLikeACommandIsReadAsItsFile) {
  // A file called "pipe:touch canary;.tar" in the working folder, matched by `*.tar`: a file, never a command.
  write_file(dir_ / "pipe:touch canary;.tar", "not a tar");
  in_folder(dir_.path(), [&] {
    const std::vector<std::string> got = expand_shard_pattern("*.tar");
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], "./pipe:touch canary;.tar");
    const std::string e = error_of([&] { open_dataset("*.tar"); });
    EXPECT_EQ(e.rfind("./pipe:touch canary;.tar", 0), 0u) << e;  // the file's own error (not a tar)
    write_file(dir_ / "x.tar", "");
    const auto brace = expand_shard_pattern("{pipe:touch canary;,x}.tar");  // each name stat()ed: files too
    EXPECT_EQ(brace, (std::vector<std::string>{"./pipe:touch canary;.tar", "x.tar"}));
  });
  EXPECT_FALSE(ran());
  EXPECT_FALSE(fs::exists(dir_ / "canary"));
}

TEST_F(CommandGuard, ACaptionsRowNamingACommandIsAnImagePath) {
  for (const std::string& folder : {dir_.path(), std::string()}) {  // beside its captions file, and in "."
    write_file(dir_ / "captions.jsonl", "{\"image\": \"" + canary_command() + "\", \"caption\": \"c\"}\n");
    in_folder(dir_.path(), [&] {
      auto ds = open_dataset(folder.empty() ? "captions.jsonl" : dir_ / "captions.jsonl");
      std::vector<uint8_t> bytes;
      const std::string e = error_of([&] { ds->read_image(0, bytes); });
      EXPECT_NE(e.find("captions.jsonl:1: image 'pipe:touch"), std::string::npos) << e;
    });
  }
  EXPECT_FALSE(ran());
}

TEST_F(CommandGuard, RefusalsOfAValueFromAFileNameTheFile) {
  const std::string e = error_of([&] { refuse_command_from(canary_command(), "E/index.json", "data"); });
  EXPECT_EQ(e.rfind("E/index.json: data 'pipe:touch ", 0), 0u) << e;
  EXPECT_NE(e.find("a command read from a file is never run"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { refuse_command_from("s3/shard.tar", "E/index.json", "data"); }), "");
  // A 100 KB command is cut in the message.
  EXPECT_LT(error_of([&] { refuse_command_from("pipe:" + std::string(100000, 'x'), "F", "data"); }).size(), 400u);
}

}  // namespace

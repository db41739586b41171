#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "train/checkpoint_dir.h"

using namespace bt::train;

namespace {
fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("bt_train_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
void write(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

void make_checkpoint(const fs::path& out, int64_t step, const std::string& payload) {
  StagedDir d(out, "checkpoint-" + std::to_string(step));
  write(d.path() / "model.bin", payload);
  write(d.path() / "trainer_state.json", "{\"global_step\": " + std::to_string(step) + ", \"log_history\": []}");  // HF's
  write(d.path() / "bridgetune_state.json", "{\"global_step\": " + std::to_string(step) + "}");
  d.commit();
}
}  // namespace

TEST(CheckpointDir, CommitMakesFolderAppearWhole) {
  auto out = fresh_dir("commit");
  make_checkpoint(out, 10, "ten");
  auto cks = list_checkpoints(out);
  ASSERT_EQ(cks.size(), 1u);
  EXPECT_EQ(cks[0].step, 10);
  EXPECT_EQ(slurp(out / "checkpoint-10" / "model.bin"), "ten");
  // No staging leftovers.
  for (auto& e : fs::directory_iterator(out)) EXPECT_EQ(e.path().filename().string().rfind(".tmp", 0), std::string::npos);
  fs::remove_all(out);
}

TEST(CheckpointDir, KillMidWriteLeavesPreviousCheckpointIntact) {
  auto out = fresh_dir("kill");
  make_checkpoint(out, 10, "ten");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    StagedDir d(out, "checkpoint-20");
    write(d.path() / "model.bin", "half-writ");
    ::kill(::getpid(), SIGKILL);  // dies before commit(): destructors never run
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto cks = list_checkpoints(out);
  ASSERT_EQ(cks.size(), 1u);
  EXPECT_EQ(cks[0].step, 10);
  EXPECT_EQ(slurp(out / "checkpoint-10" / "model.bin"), "ten");
  EXPECT_EQ(resolve_resume_dir("latest", out), out / "checkpoint-10");
  remove_stale_staging(out);
  int entries = 0;
  for (auto& e : fs::directory_iterator(out)) ++entries, (void)e;
  EXPECT_EQ(entries, 1);
  fs::remove_all(out);
}

TEST(CheckpointDir, KillBetweenRenamesRestoresTheOldCopy) {
  auto out = fresh_dir("oldcopy");
  make_checkpoint(out, 10, "ten");
  fs::rename(out / "checkpoint-10", out / ".old-checkpoint-10.123");  // state right after "move aside"
  remove_stale_staging(out);
  EXPECT_EQ(slurp(out / "checkpoint-10" / "model.bin"), "ten");
  fs::remove_all(out);
}

TEST(CheckpointDir, ReplaceSameStepAndRotate) {
  auto out = fresh_dir("rotate");
  for (int s : {5, 10, 15, 20}) make_checkpoint(out, s, "v" + std::to_string(s));
  make_checkpoint(out, 20, "again");
  EXPECT_EQ(slurp(out / "checkpoint-20" / "model.bin"), "again");
  fs::create_directories(out / "checkpoint-abc");  // not ours: ignored
  auto removed = rotate_checkpoints(out, 2);
  EXPECT_EQ(removed.size(), 2u);
  auto cks = list_checkpoints(out);
  ASSERT_EQ(cks.size(), 2u);
  EXPECT_EQ(cks[0].step, 15);
  EXPECT_EQ(cks[1].step, 20);
  EXPECT_TRUE(fs::exists(out / "checkpoint-abc"));
  fs::remove_all(out);
}

// --load_best_model_at_end: rotation never deletes the best checkpoint (HF keeps it as if it were the newest).
TEST(CheckpointDir, RotationSparesTheBest) {
  auto out = fresh_dir("rotate_best");
  for (int s : {5, 10, 15, 20}) make_checkpoint(out, s, "v" + std::to_string(s));
  rotate_checkpoints(out, 1, 10);
  auto cks = list_checkpoints(out);
  ASSERT_EQ(cks.size(), 2u);
  EXPECT_EQ(cks[0].step, 10);
  EXPECT_EQ(cks[1].step, 20);
  fs::remove_all(out);
}

TEST(CheckpointDir, ResolveErrors) {
  auto out = fresh_dir("resolve");
  EXPECT_THROW(resolve_resume_dir("latest", out), bt::Error);
  EXPECT_THROW(resolve_resume_dir((out / "nope").string(), out), bt::Error);
  fs::create_directories(out / "x");
  EXPECT_THROW(resolve_resume_dir((out / "x").string(), out), bt::Error);
  fs::remove_all(out);
}

TEST(CheckpointDir, LatestSkipsIncompleteCheckpoints) {
  auto out = fresh_dir("incomplete");
  make_checkpoint(out, 10, "ten");
  make_checkpoint(out, 20, "twenty");
  make_checkpoint(out, 30, "thirty");
  fs::remove(out / "checkpoint-30" / "bridgetune_state.json");                // not complete (HF's file is no marker)
  write(out / "checkpoint-20" / "model.safetensors", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10));
  EXPECT_EQ(checkpoint_problem(out / "checkpoint-30"), "no bridgetune_state.json");
  EXPECT_EQ(checkpoint_problem(out / "checkpoint-20"), "model.safetensors has a bad header length");
  EXPECT_EQ(resolve_resume_dir("latest", out), out / "checkpoint-10");
  write(out / "checkpoint-10" / "bridgetune_state.json", "{\"global_step\": ");  // torn
  EXPECT_THROW(resolve_resume_dir("latest", out), bt::Error);
  fs::remove_all(out);
}

TEST(CheckpointDir, LinksThatLoopOrLeadNowhereNeverBlockAResume) {
  auto out = fresh_dir("links");
  make_checkpoint(out, 10, "ten");
  fs::create_symlink("checkpoint-30", out / "checkpoint-30");  // a loop, newer than the real one
  fs::create_symlink("checkpoint-50", out / "checkpoint-40");
  fs::create_symlink("checkpoint-40", out / "checkpoint-50");
  fs::create_symlink("nowhere", out / "checkpoint-60");
  std::vector<std::string> broken;
  const auto cks = list_checkpoints(out, &broken);
  ASSERT_EQ(cks.size(), 1u);
  EXPECT_EQ(cks[0].step, 10);
  ASSERT_EQ(broken.size(), 4u);
  for (const std::string& b : broken) EXPECT_EQ(b.find("filesystem error"), std::string::npos) << b;
  EXPECT_EQ(resolve_resume_dir("latest", out), out / "checkpoint-10");
  // Named explicitly, or the only ones left: one line saying what to fix.
  std::string e;
  try {
    resolve_resume_dir((out / "checkpoint-30").string(), out);
  } catch (const bt::Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("checkpoint-30: a symbolic link loop (fix or remove the link)"), std::string::npos) << e;
  fs::remove_all(out / "checkpoint-10");
  try {
    resolve_resume_dir("latest", out);
    e = "";
  } catch (const bt::Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("broken links"), std::string::npos) << e;
  // A save over a broken link of the same name moves the link aside.
  make_checkpoint(out, 30, "thirty");
  EXPECT_EQ(slurp(out / "checkpoint-30" / "model.bin"), "thirty");
  fs::remove_all(out);
}

TEST(CheckpointDir, OlderCheckpointsKeepTheirStateInTrainerStateJson) {
  // Before HF's trainer_state.json joined the checkpoints, bridgetune's own state had that name.
  auto out = fresh_dir("legacy");
  make_checkpoint(out, 10, "ten");
  fs::remove(out / "checkpoint-10" / "bridgetune_state.json");
  EXPECT_EQ(resume_state_file(out / "checkpoint-10"), out / "checkpoint-10" / "bridgetune_state.json");
  EXPECT_EQ(checkpoint_problem(out / "checkpoint-10"), "no bridgetune_state.json");  // HF's file is not ours
  write(out / "checkpoint-10" / "trainer_state.json",
        R"({"global_step": 10, "epoch": 1, "batch_in_epoch": 0, "format": "bridgetune-trainer-state-1"})");
  EXPECT_EQ(resume_state_file(out / "checkpoint-10"), out / "checkpoint-10" / "trainer_state.json");
  EXPECT_EQ(checkpoint_problem(out / "checkpoint-10"), "");
  EXPECT_EQ(resolve_resume_dir("latest", out), out / "checkpoint-10");
  fs::remove_all(out);
}

TEST(CheckpointDir, StaleFoldersGoBeforeTheResumeDecision) {
  // A kill between "move checkpoint-20 aside" and "rename the new one in": latest must still be 20.
  auto out = fresh_dir("stale_first");
  make_checkpoint(out, 10, "ten");
  make_checkpoint(out, 20, "twenty");
  fs::rename(out / "checkpoint-20", out / ".old-checkpoint-20.77");
  fs::create_directories(out / ".del-checkpoint-5.77");
  write(out / "model.safetensors.tmp.77", "half");
  EXPECT_EQ(resolve_resume_dir("latest", out), out / "checkpoint-20");
  EXPECT_FALSE(fs::exists(out / ".del-checkpoint-5.77"));
  EXPECT_FALSE(fs::exists(out / "model.safetensors.tmp.77"));
  fs::remove_all(out);
}

TEST(CheckpointDir, RotationNeverLeavesAPartialCheckpointListed) {
  auto out = fresh_dir("rotate_rename");
  for (int s : {1, 2, 3}) make_checkpoint(out, s, std::string(1000, 'x'));
  // A child killed right after rotation's rename (before the delete finishes) leaves only a .del-* folder.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    fs::rename(out / "checkpoint-1", out / ".del-checkpoint-1.9");  // what rotate does first
    ::kill(::getpid(), SIGKILL);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  auto cks = list_checkpoints(out);
  ASSERT_EQ(cks.size(), 2u);
  EXPECT_EQ(cks[0].step, 2);
  EXPECT_EQ(rotate_checkpoints(out, 1), std::vector<fs::path>{out / "checkpoint-2"});
  EXPECT_FALSE(fs::exists(out / "checkpoint-2"));
  remove_stale_staging(out);
  int entries = 0;
  for (auto& e : fs::directory_iterator(out)) ++entries, (void)e;
  EXPECT_EQ(entries, 1);
  fs::remove_all(out);
}

// The final model replaces an earlier run's (a resumed run that ends again): the earlier results go before any new
// model file arrives, so a publication cut off part way (here: a file that cannot be moved into place) leaves no
// earlier train_results.json beside new weights.
TEST(CheckpointDir, PublishingTheFinalModelRetiresTheEarlierResultsFirst) {
  auto out = fresh_dir("publish");
  write(out / "model.safetensors", "old weights");
  for (const char* f : kFinishedRunFiles) write(out / f, "earlier run");
  write(out / "metrics.jsonl", "kept");
  fs::create_directories(out / "blocked" / "inside");  // a folder in the way of one staged file: its rename fails
  StagedDir staging(out, "final-model");
  write(staging.path() / "model.safetensors", "new weights");
  write(staging.path() / "blocked", "cannot land");
  EXPECT_THROW(publish_final_model(staging.path(), out), bt::Error);
  for (const char* f : kFinishedRunFiles) EXPECT_FALSE(fs::exists(out / f)) << f;
  EXPECT_EQ(slurp(out / "metrics.jsonl"), "kept");  // the run's log is not a result of the earlier run
  fs::remove_all(out / "blocked");
  StagedDir again(out, "final-model");
  write(again.path() / "model.safetensors", "new weights");
  publish_final_model(again.path(), out);
  EXPECT_EQ(slurp(out / "model.safetensors"), "new weights");
  EXPECT_FALSE(fs::exists(again.path()));
  fs::remove_all(out);
}

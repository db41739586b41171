#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "report/progress.h"
#include "report/run_log.h"

using namespace bt::report;

TEST(Progress, RenderShowsStepsAndEta) {
  ProgressBar bar(100, 0, stdout, false);
  const std::string s = bar.render(25, 10.0, "loss 1.5", 100);
  EXPECT_NE(s.find(" 25%"), std::string::npos);
  EXPECT_NE(s.find("25/100"), std::string::npos);
  EXPECT_NE(s.find("00:10<00:30"), std::string::npos);  // 10 s for 25 steps → 30 s for the remaining 75
  EXPECT_NE(s.find("loss 1.5"), std::string::npos);
  EXPECT_LE(static_cast<int>(s.size()), 100);
  EXPECT_EQ(format_duration(3723), "1:02:03");
}

TEST(Progress, ResumedRunEtaUsesThisSessionsRate) {
  ProgressBar bar(100, 50, stdout, false);
  EXPECT_NE(bar.render(60, 10.0, "", 100).find("00:10<00:40"), std::string::npos);
}

TEST(RunLog, AppendKeepsEarlierStepsOnly) {
  const auto path = std::filesystem::temp_directory_path() / ("bt_metrics_" + std::to_string(::getpid()) + ".jsonl");
  {
    MetricsLog log(path, false, 0);
    for (int s = 1; s <= 4; ++s) log.write(WindowRecord{s, 0, 5.0 - s, 1e-4, 10, 1});
  }
  {
    std::ofstream(path, std::ios::app) << "{\"step\": 5, \"lo";  // cut by a kill
  }
  {
    MetricsLog log(path, true, 2);  // resumed from checkpoint-2
    log.write(WindowRecord{3, 0, 1.5, 1e-4, 10, 1});
  }
  auto recs = read_window_records(path);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[2].step, 3);
  EXPECT_DOUBLE_EQ(recs[2].loss, 1.5);
  EXPECT_DOUBLE_EQ(recs[1].loss, 3.0);
  std::filesystem::remove(path);
}

TEST(Progress, LogEscapesControlBytes) {
  // A skipped sample's name may carry an escape sequence: it reaches the log escaped, never raw.
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressBar bar(10, 0, f, false);
  bar.log("skipped 'evil\x1b]0;pwned\x07\xff.jpg'");
  std::fflush(f);
  std::rewind(f);
  char buf[256] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  EXPECT_EQ(std::string(buf, n), "skipped 'evil\\x1b]0;pwned\\x07\\xff.jpg'\n");
}

// What `train` prints at its end (report/train_report.h): folder names and values may hold anything a file name can;
// the summary shows them escaped (issue 53, item 6), never as ESC/BEL that retitle or clear a terminal.
#include <gtest/gtest.h>

#include "report/train_report.h"

using namespace bt::report;

TEST(TrainReport, NamesAndValuesArePrintedEscaped) {
  TrainReport r;
  r.output_dir = "/runs/x\x1b]0;pwned\x07";
  r.results = {{"train_loss", 0.5}, {"note\x1b[2J", "a\x07\x7f"}, {"bad_utf8", "\xff\xfe"}};
  r.demo = {{"matching \x1b[31m", 0.1, 0.2, 0.3}};
  r.final_model = r.plot = true;
  r.latest_checkpoint = "/runs/x\x1b]0;pwned\x07/checkpoint-2";
  ::testing::internal::CaptureStdout();
  print_train_report(r);
  const std::string out = ::testing::internal::GetCapturedStdout();
  for (unsigned char c : out) EXPECT_TRUE(c >= 0x20 ? c != 0x7f : c == '\n') << int(c) << " in " << out;
  EXPECT_NE(out.find("outputs in /runs/x\\x1b]0;pwned\\x07:"), std::string::npos) << out;
  EXPECT_NE(out.find("/runs/x\\x1b]0;pwned\\x07/training_plot.png"), std::string::npos) << out;
  EXPECT_NE(out.find("latest checkpoint    /runs/x\\x1b]0;pwned\\x07/checkpoint-2"), std::string::npos) << out;
  EXPECT_NE(out.find("note\\x1b[2J"), std::string::npos) << out;
  EXPECT_NE(out.find("matching \\x1b[31m"), std::string::npos) << out;
  EXPECT_NE(out.find("train_loss"), std::string::npos) << out;
}

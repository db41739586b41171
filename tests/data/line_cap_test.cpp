// The per-line cap of captions and matching files (CaptionsOptions / MatchingOptions::max_line_bytes): a line
// past it is one error naming the file, the line and the cap, found while the file is read, before the giant
// line is held whole or parsed.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <functional>

#include "common/error.h"
#include "data/captions_dataset.h"
#include "data/captions_parse.h"
#include "data/matching_parse.h"
#include "test_util.h"

using namespace bt::data;
using bt::data::testing::TempDir;
using bt::data::testing::write_file;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kRow = "{\"image\": \"a.jpg\", \"caption\": \"ok\"}\n";

std::string caption_row(size_t caption_bytes) {
  return "{\"image\": \"b.jpg\", \"caption\": \"" + std::string(caption_bytes, 'x') + "\"}\n";
}

size_t peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return size_t(ru.ru_maxrss) / 1024;
}

TEST(LineCap, DefaultIsOneMiB) {
  EXPECT_EQ(CaptionsOptions{}.max_line_bytes, uint64_t(1) << 20);
  EXPECT_EQ(MatchingOptions{}.max_line_bytes, uint64_t(1) << 20);
}

TEST(LineCap, JsonlLinePastTheCapNamesFileLineAndCap) {
  CaptionsOptions o;
  o.max_line_bytes = 100;
  o.on_bad_row = OnBad::kSkip;  // too long is never a skippable row: the cap bounds memory
  const std::string e = error_of([&] { parse_jsonl(kRow + caption_row(200), "c.jsonl", o); });
  EXPECT_EQ(e, "c.jsonl:2: line longer than the limit of 100 bytes (rows take a few KB; raise the limit with "
               "--max_line_bytes if the line is real)");
  o.max_line_bytes = 300;
  EXPECT_EQ(parse_jsonl(kRow + caption_row(200), "c.jsonl", o).rows.size(), 2u);
}

TEST(LineCap, CsvRecordSpanningLinesCountsWhole) {
  CaptionsOptions o;
  o.max_line_bytes = 64;
  // A quoted caption over many short lines is one record: the cap applies to the record.
  std::string quoted = "\"";
  for (int i = 0; i < 20; ++i) quoted += "line\n";
  quoted += "\"";
  const std::string e = error_of([&] { parse_csv("image,caption\na.jpg,ok\nb.jpg," + quoted + "\n", "c.csv", o); });
  EXPECT_EQ(e.rfind("c.csv:3: line longer than the limit of 64 bytes", 0), 0u) << e;
  EXPECT_EQ(error_of([&] { parse_csv("image,caption\nb.jpg," + std::string(100, 'y') + "\n", "c.csv", o); })
                .rfind("c.csv:2: line longer than the limit of 64 bytes", 0),
            0u);
  o.max_line_bytes = 200;
  EXPECT_EQ(parse_csv("image,caption\na.jpg,ok\nb.jpg," + quoted + "\n", "c.csv", o).rows.size(), 2u);
}

TEST(LineCap, MatchingLinePastTheCap) {
  MatchingOptions o;
  o.max_line_bytes = 50;
  const std::string row = "{\"image\":\"a.jpg\",\"caption_choices\":[\"" + std::string(60, 'c') + "\"],\"label\":0}";
  EXPECT_EQ(error_of([&] { parse_matching_jsonl(row + "\n", "m.jsonl", o); }).rfind("m.jsonl:1: line longer", 0), 0u);
}

TEST(LineCap, GiantLineInAFileIsRefusedWhileReading) {
  // 64 MiB in one caption: refused after about the cap is read. Before the cap, the whole file was read, copied
  // and parsed (a 1 GiB line took 50 s and 4.25 GB).
  TempDir d;
  write_file(d / "captions.jsonl", kRow + caption_row(size_t(64) << 20) + kRow);
  const size_t before = peak_rss_mb();
  const std::string e = error_of([&] { open_captions(d / "captions.jsonl"); });
  EXPECT_EQ(e.rfind(d / "captions.jsonl:2: line longer than the limit of 1048576 bytes", 0), 0u) << e;
  EXPECT_NE(e.find("--max_line_bytes"), std::string::npos);
  EXPECT_LT(peak_rss_mb(), before + 32) << "the file was read past the cap";
  write_file(d / "m.jsonl", caption_row(size_t(8) << 20));
  EXPECT_EQ(error_of([&] { read_matching_file(d / "m.jsonl"); }).rfind(d / "m.jsonl:1: line longer than", 0), 0u);
}

TEST(LineCap, RaisedCapAcceptsTheLine) {
  TempDir d;
  write_file(d / "captions.jsonl", kRow + caption_row(size_t(2) << 20));
  CaptionsOptions o;
  o.max_line_bytes = uint64_t(4) << 20;
  EXPECT_EQ(open_captions(d / "captions.jsonl", o)->size(), 2u);
  // Lines end at CR too for the read-time count (old Mac CSVs), and short lines never add up.
  std::string many;
  for (int i = 0; i < 5000; ++i) many += kRow;
  write_file(d / "many.jsonl", many);
  o.max_line_bytes = 100;
  EXPECT_EQ(open_captions(d / "many.jsonl", o)->size(), 5000u);
}

}  // namespace

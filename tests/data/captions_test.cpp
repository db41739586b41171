#include <gtest/gtest.h>

#include "common/error.h"
#include "data/captions_dataset.h"
#include "data/captions_parse.h"
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

CaptionsOptions skip() {
  CaptionsOptions o;
  o.on_bad_row = OnBad::kSkip;
  return o;
}

}  // namespace

TEST(Jsonl, ParsesRowsAndIgnoresBlankLines) {
  auto p = parse_jsonl("{\"image\": \"a.jpg\", \"caption\": \"A cat.\"}\n\n  \r\n"
                       "{\"caption\": \"caf\\u00e9 \\\"quoted\\\"\", \"image\": \"sub/b.jpg\", \"x\": 1}\r\n",
                       "c.jsonl", {});
  ASSERT_EQ(p.rows.size(), 2u);
  EXPECT_EQ(p.rows[0].image, "a.jpg");
  EXPECT_EQ(p.rows[0].caption, "A cat.");
  EXPECT_EQ(p.rows[0].line, 1u);
  EXPECT_EQ(p.rows[1].image, "sub/b.jpg");
  EXPECT_EQ(p.rows[1].caption, "caf\xC3\xA9 \"quoted\"");
  EXPECT_EQ(p.rows[1].line, 4u);
  EXPECT_EQ(p.bad.count, 0u);
}

TEST(Jsonl, SelectsColumns) {
  CaptionsOptions o;
  o.image_column = "file_name";
  o.caption_column = "text";
  auto p = parse_jsonl("\xEF\xBB\xBF{\"file_name\": \"x.png\", \"text\": \"hello\", \"caption\": \"no\"}", "c", o);
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_EQ(p.rows[0].image, "x.png");
  EXPECT_EQ(p.rows[0].caption, "hello");
}

TEST(Jsonl, ErrorsNameFileLineAndReason) {
  std::string good = "{\"image\": \"a.jpg\", \"caption\": \"c\"}\n";
  EXPECT_EQ(error_of([&] { parse_jsonl(good + good + "{\"image\": \"a.jpg\", \"text\": \"t\"}\n", "captions.jsonl", {}); }),
            "captions.jsonl:3: missing key 'caption' (keys: image, text)");
  std::string msg = error_of([&] { parse_jsonl(good + "{\"image\": \"a.jpg\",\n", "captions.jsonl", {}); });
  EXPECT_EQ(msg.rfind("captions.jsonl:2: not valid JSON (", 0), 0u) << msg;
  EXPECT_EQ(error_of([&] { parse_jsonl("[1, 2]\n", "c.jsonl", {}); }), "c.jsonl:1: not a JSON object (got array)");
  EXPECT_EQ(error_of([&] { parse_jsonl("{\"image\": 3, \"caption\": \"c\"}", "c.jsonl", {}); }),
            "c.jsonl:1: key 'image' is not a string (got number)");
  EXPECT_EQ(error_of([&] { parse_jsonl("{\"image\": \"a\", \"caption\": \"\"}", "c.jsonl", {}); }),
            "c.jsonl:1: empty 'caption'");
  EXPECT_EQ(error_of([&] { parse_jsonl("{\"image\": \"a\", \"caption\": null}", "c.jsonl", {}); }),
            "c.jsonl:1: key 'caption' is not a string (got null)");
  EXPECT_EQ(error_of([&] { parse_jsonl("{\"image\": \"a\\u0000b\", \"caption\": \"c\"}", "c.jsonl", {}); }),
            "c.jsonl:1: image path contains a NUL byte");
  msg = error_of([&] { parse_jsonl("{\"image\": \"a\", \"caption\": \"\xFF\"}", "c.jsonl", {}); });
  EXPECT_EQ(msg.rfind("c.jsonl:1: not valid JSON (", 0), 0u) << msg;
}

TEST(Jsonl, SkipKeepsBadRowsFlaggedAndCounted) {
  auto p = parse_jsonl("{\"image\": \"a.jpg\", \"caption\": \"c\"}\nnot json\n{\"image\": \"b.jpg\"}\n"
                       "{\"image\": \"b.jpg\", \"caption\": \"d\"}\n",
                       "c.jsonl", skip());
  ASSERT_EQ(p.rows.size(), 4u);
  EXPECT_FALSE(p.rows[0].bad);
  EXPECT_TRUE(p.rows[1].bad);
  EXPECT_TRUE(p.rows[2].bad);
  EXPECT_FALSE(p.rows[3].bad);
  EXPECT_EQ(p.bad.count, 2u);
  ASSERT_EQ(p.bad.first.size(), 2u);
  EXPECT_EQ(p.bad.first[1], "c.jsonl:3: missing key 'caption' (keys: image)");
}

TEST(Csv, QuotingEmbeddedNewlinesAndCrlf) {
  std::string text =
      "image,caption,extra\r\n"
      "a.jpg,plain caption,1\r\n"
      "\"b,c.jpg\",\"He said \"\"hi\"\", then\r\nleft.\",2\r\n"
      "\r\n"
      "d.jpg,\"na\xC3\xAFve\",\n"
      "e.jpg,last,3";
  auto p = parse_csv(text, "c.csv", {});
  ASSERT_EQ(p.rows.size(), 4u);
  EXPECT_EQ(p.rows[0].image, "a.jpg");
  EXPECT_EQ(p.rows[0].caption, "plain caption");
  EXPECT_EQ(p.rows[0].line, 2u);
  EXPECT_EQ(p.rows[1].image, "b,c.jpg");
  EXPECT_EQ(p.rows[1].caption, "He said \"hi\", then\r\nleft.");
  EXPECT_EQ(p.rows[1].line, 3u);
  EXPECT_EQ(p.rows[2].caption, "na\xC3\xAFve");
  EXPECT_EQ(p.rows[2].line, 6u);
  EXPECT_EQ(p.rows[3].image, "e.jpg");
  EXPECT_EQ(p.rows[3].line, 7u);
}

TEST(Csv, ColumnSelectionAndMissingColumn) {
  CaptionsOptions o;
  o.image_column = "path";
  o.caption_column = "text";
  auto p = parse_csv("text,path\nhello,x.jpg\n", "c.csv", o);
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_EQ(p.rows[0].image, "x.jpg");
  EXPECT_EQ(p.rows[0].caption, "hello");
  o.caption_column = "image_description";
  EXPECT_EQ(error_of([&] { parse_csv("image,caption\na,b\n", "captions.csv", o); }),
            "captions.csv: no column 'path'; columns are: image, caption");
  o.image_column = "image";
  EXPECT_EQ(error_of([&] { parse_csv("image,caption\na,b\n", "captions.csv", o); }),
            "captions.csv: no column 'image_description'; columns are: image, caption");
  // a header that is not column names (another file's first line) is counted, never echoed
  EXPECT_EQ(error_of([&] { parse_csv("root:x:0:0:root:/root:/bin/bash,b\n", "p.csv", {}); }),
            "p.csv: no column 'image' (the header row has 2 fields)");
  EXPECT_EQ(error_of([&] { parse_csv("\n\n", "e.csv", {}); }), "e.csv: empty CSV file (expected a header row)");
}

TEST(Csv, BadRecords) {
  EXPECT_EQ(error_of([&] { parse_csv("image,caption\na.jpg\n", "c.csv", {}); }), "c.csv:2: 1 fields, the header has 2");
  EXPECT_EQ(error_of([&] { parse_csv("image,caption\na.jpg,\n", "c.csv", {}); }), "c.csv:2: empty 'caption'");
  EXPECT_EQ(error_of([&] { parse_csv("image,caption\na.jpg,ok\nb.jpg,\"open\n", "c.csv", {}); }),
            "c.csv:3: unterminated quoted field");
  EXPECT_EQ(error_of([&] { parse_csv("image,caption\na.jpg,x\"y\n", "c.csv", {}); }),
            "c.csv:2: quote inside an unquoted field (quote the whole field)");
  EXPECT_EQ(error_of([&] { parse_csv("image,caption\na.jpg,\"x\"y\n", "c.csv", {}); }),
            "c.csv:2: unexpected character after a closing quote (a quote inside a quoted field must be doubled)");
  EXPECT_EQ(error_of([&] { parse_csv("image,caption\na.jpg,\xC3\n", "c.csv", {}); }), "c.csv:2: not valid UTF-8");
  auto p = parse_csv("image,caption\na.jpg,x\"y\nb.jpg,ok\nc.jpg\n", "c.csv", skip());
  ASSERT_EQ(p.rows.size(), 3u);
  EXPECT_TRUE(p.rows[0].bad);
  EXPECT_FALSE(p.rows[1].bad);
  EXPECT_EQ(p.rows[1].line, 3u);
  EXPECT_EQ(p.rows[1].caption, "ok");
  EXPECT_TRUE(p.rows[2].bad);
  EXPECT_EQ(p.bad.count, 2u);
}

TEST(Utf8, Validation) {
  EXPECT_TRUE(valid_utf8("plain \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(valid_utf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));  // > U+10FFFF
  EXPECT_FALSE(valid_utf8("\xE2\x82"));          // truncated
}

TEST(CaptionsDataset, OpensFolderResolvesPathsAndSharesKeys) {
  TempDir d;
  write_file(d / "images/a.jpg", "AAAA");
  write_file(d / "images/b.jpg", "BB");
  write_file(d / "captions.jsonl",
             "{\"image\": \"images/a.jpg\", \"caption\": \"one\"}\n"
             "{\"image\": \"./images/../images/a.jpg\", \"caption\": \"two\"}\n"
             "{\"image\": \"images/b.jpg\", \"caption\": \"three\"}\n");
  auto ds = open_dataset(d.path());
  ASSERT_EQ(ds->size(), 3u);
  EXPECT_EQ(ds->caption(1), "two");
  EXPECT_EQ(ds->image_key(0), ds->image_key(1));
  EXPECT_NE(ds->image_key(0), ds->image_key(2));
  EXPECT_EQ(ds->image_key(2), d / "images/b.jpg");
  std::vector<uint8_t> bytes;
  ds->read_image(1, bytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "AAAA");
  EXPECT_EQ(ds->describe(2), d / "captions.jsonl:3 (images/b.jpg)");
  EXPECT_EQ(static_cast<CaptionsDataset&>(*ds).num_images(), 2u);
}

TEST(CaptionsDataset, CsvFallbackAndImageErrors) {
  TempDir d;
  write_file(d / "empty.jpg", "");
  write_file(d / "captions.csv", "image,caption\nmissing.jpg,a\nempty.jpg,b\n");
  auto ds = open_dataset(d.path());
  ASSERT_EQ(ds->size(), 2u);
  std::vector<uint8_t> bytes;
  EXPECT_EQ(error_of([&] { ds->read_image(0, bytes); }),
            d / ("captions.csv:2: image 'missing.jpg': No such file or directory (looked for " +
                 (d / "missing.jpg") + ")"));
  EXPECT_EQ(error_of([&] { ds->read_image(1, bytes); }), d / "captions.csv:3: image 'empty.jpg': empty file (0 bytes)");
}

TEST(CaptionsDataset, BadRowsWithSkipThrowOnRead) {
  TempDir d;
  write_file(d / "c.jsonl", "{\"image\": \"a.jpg\"}\n{\"image\": \"a.jpg\", \"caption\": \"x\"}\n");
  EXPECT_EQ(error_of([&] { open_dataset(d / "c.jsonl"); }), d / "c.jsonl:1: missing key 'caption' (keys: image)");
  auto ds = open_captions(d / "c.jsonl", skip());
  ASSERT_EQ(ds->size(), 2u);
  EXPECT_TRUE(ds->is_bad(0));
  EXPECT_FALSE(ds->is_bad(1));
  EXPECT_EQ(ds->bad_rows().count, 1u);
  std::vector<uint8_t> bytes;
  EXPECT_EQ(error_of([&] { ds->read_image(0, bytes); }), ds->bad_reason(0));
}

TEST(CaptionsDataset, MissingFolderAndFiles) {
  TempDir d;
  EXPECT_NE(error_of([&] { open_dataset(d.path()); }).find("no captions.jsonl or captions.csv"), std::string::npos);
  EXPECT_EQ(error_of([&] { open_dataset(d / "nope.jsonl"); }), d / "nope.jsonl: No such file or directory");
  write_file(d / "x.txt", "hi");
  EXPECT_NE(error_of([&] { open_dataset(d / "x.txt"); }).find("unknown captions file type"), std::string::npos);
}

TEST(SourceKinds, Classify) {
  TempDir d;
  EXPECT_EQ(classify_source("data/shard-{000..009}.tar"), SourceKind::kShards);
  EXPECT_EQ(classify_source("x.parquet"), SourceKind::kParquet);
  EXPECT_EQ(classify_source("x.jsonl"), SourceKind::kCaptions);
  write_file(d / "shard-000000.tar", "");
  EXPECT_EQ(classify_source(d.path()), SourceKind::kShards);
  write_file(d / "captions.jsonl", "");
  EXPECT_EQ(classify_source(d.path()), SourceKind::kCaptions);
}

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>

#include "common/error.h"
#include "data/captions_dataset.h"
#include "data/shard_stream.h"
#include "data/tar_dataset.h"
#include "data/synth.h"
#include "test_util.h"

using namespace bt::data;
using bt::data::testing::TempDir;
using bt::data::testing::write_file;

namespace {

using Members = bt::data::testing::TarMembers;
using bt::data::testing::tar_of;

std::string make_tar(const Members& members) { return tar_of(members); }

std::vector<TarSample> read_all(const std::string& tar, const ShardOptions& o = {}, BadRows* bad = nullptr) {
  auto r = ShardReader::open_memory(tar.data(), tar.size(), "mem.tar", o);
  std::vector<TarSample> out;
  TarSample s;
  while (r->next(s)) out.push_back(s);
  if (bad) *bad = r->bad();
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "(no error)";
}

ShardOptions skip() {
  ShardOptions o;
  o.on_bad = OnBad::kSkip;
  return o;
}

const std::string kJpg(3000, 'J');

}  // namespace

TEST(Shards, GroupsMembersByKey) {
  std::string tar = make_tar({{"000.jpg", "JPEG0"},
                              {"000.txt", "first caption\n"},
                              {"000.cls", "ignored"},
                              {"dir/001.PNG", "PNG1"},
                              {"dir/001.json", "{\"caption\": \"from json\", \"x\": 1}"},
                              {"dir/001.seg.png", "not the image"},
                              {"002.json", "{\"caption\": \"json loses\"}"},
                              {"002.txt", "txt wins"},
                              {"002.jpeg", "JPEG2"}});
  auto s = read_all(tar);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].key, "mem.tar:000");
  EXPECT_EQ(std::string(s[0].image.begin(), s[0].image.end()), "JPEG0");
  EXPECT_EQ(s[0].image_ext, "jpg");
  EXPECT_EQ(s[0].caption, "first caption");
  EXPECT_EQ(s[1].key, "mem.tar:dir/001");
  EXPECT_EQ(s[1].image_ext, "png");
  EXPECT_EQ(std::string(s[1].image.begin(), s[1].image.end()), "PNG1");
  EXPECT_EQ(s[1].caption, "from json");
  EXPECT_EQ(s[2].caption, "txt wins");
  EXPECT_EQ(s[2].image_ext, "jpeg");
  auto r = ShardReader::open_memory(tar.data(), tar.size(), "mem.tar");
  EXPECT_EQ(r->count_remaining(), 3u);
}

TEST(Shards, EveryFormatPillowReadsIsAnImageMember) {
  const char* exts[] = {"webp", "gif", "bmp", "tif", "tiff", "WEBP", "Tiff"};
  std::vector<std::pair<std::string, std::string>> members;
  for (size_t i = 0; i < std::size(exts); ++i) {
    members.push_back({std::to_string(i) + ".txt", "caption " + std::to_string(i)});
    members.push_back({std::to_string(i) + "." + exts[i], std::string("IMAGE-") + exts[i]});
  }
  members.push_back({"9.txt", "no image"});
  members.push_back({"9.heic", "not one of Pillow's"});
  auto s = read_all(make_tar(members), skip());
  ASSERT_EQ(s.size(), std::size(exts)) << "the .heic sample has no image member";
  for (size_t i = 0; i < std::size(exts); ++i) {
    EXPECT_EQ(std::string(s[i].image.begin(), s[i].image.end()), std::string("IMAGE-") + exts[i]);
    std::string lower = exts[i];
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(s[i].image_ext, lower);
  }
}

TEST(Shards, CaptionColumnForJson) {
  ShardOptions o;
  o.caption_column = "text";
  auto s = read_all(make_tar({{"a.jpg", "J"}, {"a.json", "{\"text\": \"hello\"}"}}), o);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].caption, "hello");
  EXPECT_EQ(error_of([&] { read_all(make_tar({{"a.jpg", "J"}, {"a.json", "{\"caption\": \"x\"}"}}), o); }),
            "mem.tar: sample 'a': caption json has no string 'text'");
}

TEST(Shards, BadSamplesErrorOrSkip) {
  std::string tar = make_tar({{"a.jpg", "J"}, {"b.jpg", "J"}, {"b.txt", "ok"}, {"c.txt", "no image"},
                              {"d.jpg", "J"}, {"d.txt", " \n"}, {"e.jpg", "J"}, {"e.txt", "\xFF"}});
  EXPECT_EQ(error_of([&] { read_all(tar); }), "mem.tar: sample 'a': no caption (members: a.jpg)");
  BadRows bad;
  auto s = read_all(tar, skip(), &bad);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].key, "mem.tar:b");
  EXPECT_EQ(bad.count, 4u);
  ASSERT_EQ(bad.first.size(), 4u);
  EXPECT_EQ(bad.first[1], "mem.tar: sample 'c': no image (members: c.txt)");
  EXPECT_EQ(bad.first[2], "mem.tar: sample 'd': empty caption");
  EXPECT_EQ(bad.first[3], "mem.tar: sample 'e': caption is not valid UTF-8");
}

// A member name from the file is quoted cut at 200 bytes: a 300 KB name cannot become a huge error line.
TEST(Shards, HugeMemberNamesAreClippedInErrors) {
  const std::string key(300000, 'k');
  const std::string e = error_of([&] { read_all(make_tar({{key + ".jpg", "J"}})); });
  EXPECT_LT(e.size(), 800u) << e.size();
  EXPECT_NE(e.find("mem.tar: sample '" + std::string(200, 'k') + "...': no caption"), std::string::npos);
}

TEST(Shards, TruncatedMemberNamesShardAndMember) {
  std::string tar = make_tar({{"000.jpg", kJpg}, {"000.txt", "a"}, {"001.jpg", kJpg}, {"001.txt", "b"}});
  // Cut inside 001.jpg's data: headers are 512-byte blocks, 000.jpg data rounds up to 3072 bytes.
  size_t cut = tar.find("001.jpg");
  ASSERT_NE(cut, std::string::npos);
  std::string truncated = tar.substr(0, cut + 1024 + 1500);
  std::string msg = error_of([&] { read_all(truncated); });
  EXPECT_EQ(msg.rfind("mem.tar: member '001.jpg': ", 0), 0u) << msg;
  EXPECT_NE(msg.find("runcated"), std::string::npos) << msg;
  BadRows bad;
  auto s = read_all(truncated, skip(), &bad);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].caption, "a");
  EXPECT_EQ(bad.count, 1u);
  auto r = ShardReader::open_memory(truncated.data(), truncated.size(), "mem.tar", skip());
  EXPECT_EQ(r->count_remaining(), 1u);
}

TEST(Shards, GarbageAndEmptyInput) {
  std::string garbage(5000, '\x5A');
  std::string msg = error_of([&] { read_all(garbage); });
  EXPECT_EQ(msg.rfind("mem.tar: ", 0), 0u) << msg;
  BadRows bad;
  EXPECT_TRUE(read_all(garbage, skip(), &bad).empty());
  EXPECT_EQ(bad.count, 1u);
  // A tar header with a broken checksum.
  std::string tar = make_tar({{"a.jpg", "J"}, {"a.txt", "t"}});
  tar[150] ^= 0x11;
  msg = error_of([&] { read_all(tar); });
  EXPECT_EQ(msg.rfind("mem.tar: ", 0), 0u) << msg;
}

TEST(Shards, OversizedMemberIsABadSample) {
  ShardOptions o = skip();
  o.max_member_bytes = 1000;
  BadRows bad;
  auto s = read_all(make_tar({{"a.jpg", kJpg}, {"a.txt", "x"}, {"b.jpg", "J"}, {"b.txt", "y"}}), o, &bad);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].caption, "y");
  ASSERT_EQ(bad.count, 1u);
  EXPECT_EQ(bad.first[0], "mem.tar: member 'a.jpg': 3000 bytes, more than the limit of 1000");
}

TEST(ShardPattern, BraceExpansion) {
  using V = std::vector<std::string>;
  EXPECT_EQ(expand_braces("s-{000..003}.tar"), (V{"s-000.tar", "s-001.tar", "s-002.tar", "s-003.tar"}));
  EXPECT_EQ(expand_braces("{a,b}-{1..2}"), (V{"a-1", "a-2", "b-1", "b-2"}));
  EXPECT_EQ(expand_braces("x{5..3}"), (V{"x5", "x4", "x3"}));
  EXPECT_EQ(expand_braces("{8..11}"), (V{"8", "9", "10", "11"}));
  EXPECT_EQ(expand_braces("{a,b{1,2}}c"), (V{"ac", "b1c", "b2c"}));
  EXPECT_EQ(expand_braces("lit{x}{0..1}"), (V{"lit{x}0", "lit{x}1"}));
  EXPECT_EQ(expand_braces("open{a,b"), (V{"open{a,b"}));
  EXPECT_EQ(expand_braces("plain.tar"), (V{"plain.tar"}));
  EXPECT_THROW(expand_braces("{0..99999999}"), bt::Error);
  EXPECT_THROW(expand_braces("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"
                             "{a,b}{a,b}{a,b}"),
               bt::Error);
}

TEST(ShardPattern, GlobsFoldersAndMissingShards) {
  TempDir d;
  for (const char* n : {"shard-000000.tar", "shard-000001.tar", "shard-000002.tar", "other.txt"}) write_file(d / n, "");
  using V = std::vector<std::string>;
  EXPECT_EQ(expand_shard_pattern(d / "shard-{000000..000001}.tar"), (V{d / "shard-000000.tar", d / "shard-000001.tar"}));
  EXPECT_EQ(expand_shard_pattern(d / "shard-*.tar").size(), 3u);
  EXPECT_EQ(expand_shard_pattern(d.path()), (V{d / "shard-000000.tar", d / "shard-000001.tar", d / "shard-000002.tar"}));
  EXPECT_EQ(error_of([&] { expand_shard_pattern(d / "shard-{000000..000003}.tar"); }),
            d / "shard-000003.tar: shard not found (from the pattern '" + d / "shard-{000000..000003}.tar')");
  EXPECT_EQ(error_of([&] { expand_shard_pattern(d / "*.tgz"); }), d / "*.tgz: no files match this pattern");
}

TEST(ShardStream, ReadsShardsInOrderAndCounts) {
  TempDir d;
  write_file(d / "s-0.tar", make_tar({{"a.jpg", "1"}, {"a.txt", "A"}, {"b.jpg", "2"}, {"b.txt", "B"}}));
  write_file(d / "s-1.tar", make_tar({{"c.jpg", "3"}, {"c.txt", "C"}}));
  ShardStream st({d / "s-1.tar", d / "s-0.tar"});
  TarSample s;
  std::vector<std::string> caps;
  while (st.next(s)) caps.push_back(s.caption);
  EXPECT_EQ(caps, (std::vector<std::string>{"C", "A", "B"}));
  EXPECT_EQ(count_shard_samples({d / "s-0.tar", d / "s-1.tar"}), (std::vector<size_t>{2, 1}));
  EXPECT_EQ(count_shard_samples({d / "s-0.tar"}), (std::vector<size_t>{2}));  // cached
  ShardStream missing({d / "s-9.tar", d / "s-1.tar"}, skip());
  ASSERT_TRUE(missing.next(s));
  EXPECT_EQ(s.caption, "C");
  EXPECT_FALSE(missing.next(s));
  EXPECT_EQ(missing.bad().count, 1u);
  ShardStream strict({d / "s-9.tar"});
  EXPECT_THROW(strict.next(s), bt::Error);
}

TEST(ShardStream, ReadsSynthTarShards) {
  TempDir d;
  SynthOptions o;
  o.n = 10;
  o.seed = 3;
  o.min_width = 64;
  o.max_width = 96;
  o.tar = true;
  o.shard_size = 4;
  write_synth(d.path(), o);
  auto shards = expand_shard_pattern(d / "shard-{000000..000002}.tar");
  EXPECT_EQ(count_shard_samples(shards), (std::vector<size_t>{4, 4, 2}));
  auto plan = synth_plan(o);
  ShardStream st(shards);
  TarSample s;
  size_t i = 0;
  while (st.next(s)) {
    ASSERT_LT(i, o.n);
    EXPECT_EQ(s.caption, plan.captions[i]);
    EXPECT_EQ(s.image, synth_jpeg(o, plan.image_of_row[i]));
    EXPECT_EQ(s.image_ext, "jpg");
    ++i;
  }
  EXPECT_EQ(i, o.n);
}

TEST(TarDataset, IndexesShardsAndPreadsImages) {
  TempDir d;
  std::string big(70000, 'x');
  for (size_t i = 0; i < big.size(); ++i) big[i] = char('a' + i % 23);
  write_file(d / "s-0.tar", make_tar({{"a.jpg", "JPEG-A"}, {"a.txt", "A"}, {"b.txt", "B"}, {"b.png", big},
                                      {std::string(130, 'L') + ".jpg", "LONG"}, {std::string(130, 'L') + ".txt", "L"}}));
  write_file(d / "s-1.tar", make_tar({{"c.jpg", ""}, {"c.txt", "no bytes"}, {"e.jpg", "E"}, {"e.txt", "E"}}));
  EXPECT_NE(error_of([&] { open_dataset(d / "s-{0..1}.tar"); }).find("s-1.tar: member 'c.jpg'"), std::string::npos);
  CaptionsOptions co;
  co.on_bad_row = OnBad::kSkip;
  auto ds = open_dataset(d / "s-{0..1}.tar", co);
  ASSERT_EQ(ds->size(), 4u);
  std::vector<uint8_t> bytes;
  std::vector<std::string> want = {"JPEG-A", big, "LONG", "E"};
  std::vector<std::string> caps = {"A", "B", "L", "E"};
  for (size_t i = 0; i < 4; ++i) {
    ds->read_image(i, bytes);
    EXPECT_EQ(std::string(bytes.begin(), bytes.end()), want[i]) << i;
    EXPECT_EQ(ds->caption(i), caps[i]);
  }
  EXPECT_EQ(ds->image_key(1), d / "s-0.tar:b");
  EXPECT_EQ(static_cast<TarDataset&>(*ds).bad_rows().count, 1u);
}

TEST(TarDataset, ReadsSynthShardsLikeTheFolderLayout) {
  TempDir d;
  SynthOptions o;
  o.n = 9;
  o.seed = 5;
  o.min_width = 64;
  o.max_width = 96;
  o.tar = true;
  o.shard_size = 4;
  write_synth(d.path(), o);
  auto ds = open_dataset(d.path());
  auto plan = synth_plan(o);
  ASSERT_EQ(ds->size(), o.n);
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < o.n; ++i) {
    ds->read_image(i, bytes);
    EXPECT_EQ(bytes, synth_jpeg(o, plan.image_of_row[i]));
    EXPECT_EQ(ds->caption(i), plan.captions[i]);
  }
}

TEST(TarDataset, IndexModeHonoursTheMemberLimit) {
  // Index mode used to return before the size check, and read_image() then allocated the header's size.
  TempDir d;
  write_file(d / "s.tar", make_tar({{"a.jpg", kJpg}, {"a.txt", "A"}, {"b.jpg", "J"}, {"b.txt", "B"}}));
  ShardOptions o;
  o.max_member_bytes = 1000;
  EXPECT_EQ(error_of([&] { TarDataset::open({d / "s.tar"}, o); }),
            d / "s.tar: member 'a.jpg': 3000 bytes, more than the limit of 1000");
  o.on_bad = OnBad::kSkip;
  auto ds = TarDataset::open({d / "s.tar"}, o);
  ASSERT_EQ(ds->size(), 1u);
  EXPECT_EQ(ds->caption(0), "B");
  EXPECT_EQ(ds->bad_rows().count, 1u);
  // The captions options' image cap reaches the tar reader through open_dataset().
  CaptionsOptions co;
  co.max_image_bytes = 1000;
  EXPECT_NE(error_of([&] { open_dataset(d / "s.tar", co); }).find("more than the limit of 1000"), std::string::npos);
}

// A shard replaced by a FIFO after indexing: the image read is refused at once through the file gate (a blocking
// open of a FIFO would hang the loader's worker forever).
TEST(TarDataset, ShardReplacedByAFifoIsRefusedNotWaitedFor) {
  TempDir d;
  write_file(d / "s-0.tar", make_tar({{"a.jpg", "1"}, {"a.txt", "A"}}));
  auto ds = TarDataset::open({d / "s-0.tar"});
  std::vector<uint8_t> bytes;
  ds->read_image(0, bytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "1");
  std::filesystem::remove(d / "s-0.tar");
  ASSERT_EQ(::mkfifo((d / "s-0.tar").c_str(), 0600), 0);
  const std::string e = error_of([&] { ds->read_image(0, bytes); });
  EXPECT_NE(e.find("is a FIFO"), std::string::npos) << e;
  EXPECT_NE(e.find("s-0.tar"), std::string::npos) << e;
}

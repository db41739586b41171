// Several --train_file opened as one mixed source (source/mixed_source.h): the concatenation, its plan, the
// per-dataset row cap, and how the flag's values split into files.
#include "source/mixed_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.h"
#include "data/synth.h"

namespace bt::source {
namespace {
namespace fs = std::filesystem;

TEST(MixedSource, OpensEachDatasetAndConcatenatesThem) {
  const fs::path root = fs::temp_directory_path() / ("bt_mixed_source_" + std::to_string(getpid()));
  data::SynthOptions s;
  s.n = 12, s.images = 4, s.seed = 3, s.min_width = 40, s.max_width = 60, s.threads = 1;
  data::write_synth((root / "a").string(), s);
  s.n = 7, s.tar = true, s.shard_size = 4;
  data::write_synth((root / "b").string(), s);
  const std::string a = (root / "a").string(), b = (root / "b").string();
  const Source src = open_mixed({a, b}, {{}, loader::MixStopping::kAllExhausted, 1});
  ASSERT_TRUE(src.mix);
  EXPECT_EQ(src.dataset->size(), 19u);
  EXPECT_EQ(src.mix->length(), 24u);  // round-robin, all_exhausted: 2 x 12
  EXPECT_EQ(src.epoch_rows(), 24u);
  EXPECT_EQ(src.dataset->caption(12), open_source(b).dataset->caption(0));
  loader::SamplerOptions so;
  src.apply_order(so);
  EXPECT_EQ(so.mix, src.mix);
  // --max_train_samples caps each dataset.
  SourceOptions capped;
  capped.max_rows = 5;
  EXPECT_EQ(open_mixed({a, b}, {{0.5, 0.5}}, capped).dataset->size(), 10u);
  // A missing dataset fails with the flag and the path.
  capped.flag = "--train_file";
  EXPECT_THROW(open_mixed({a, (root / "nope").string()}, {}, capped), Error);
  fs::remove_all(root);
}

TEST(MixedSource, TrainFileValuesSplitAtTopLevelCommas) {
  EXPECT_EQ(split_train_files({"a.jsonl,b/shard-{0,1}.tar", "c"}),
            (std::vector<std::string>{"a.jsonl", "b/shard-{0,1}.tar", "c"}));
  EXPECT_EQ(split_train_files({"pipe:cat x,y.tar"}), (std::vector<std::string>{"pipe:cat x,y.tar"}));
  const fs::path odd = fs::temp_directory_path() / ("bt_mixed,source_" + std::to_string(getpid()));
  fs::create_directories(odd);  // an existing path with a comma is one file
  EXPECT_EQ(split_train_files({odd.string()}), (std::vector<std::string>{odd.string()}));
  fs::remove_all(odd);
}

}  // namespace
}  // namespace bt::source

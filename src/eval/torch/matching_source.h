// The contest's matching task as data: which splits have its shape, and opening them as a MatchingSet
// (embed_eval.h). The one place `bridgetune evaluate --task matching` and the trainer's evaluations read it.
//
// A split has the matching shape when it has an image column plus caption_choices and label columns:
//  - parquet (a file or folder; the contest's "matching" config): those top-level columns in its first file;
//  - a JSONL file whose first row has them (data/matching_parse.h);
//  - a folder holding matching.jsonl (what `bridgetune synth` and the demo write beside captions.jsonl).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/bad_rows.h"
#include "data/jsonl.h"
#include "eval/torch/embed_eval.h"
#include "source/source.h"

namespace bt::eval {

struct MatchingSourceOptions {
  std::string image_column = "image", choices_column = "caption_choices", label_column = "label";
  data::OnBad on_bad = data::OnBad::kError;
  int64_t max_rows = 0;  // > 0: only the first N rows
  uint64_t max_line_bytes = data::kDefaultMaxLineBytes;  // JSONL: a longer line is an error
  std::string flag = "--validation_file";  // for messages
};

// The options of the matching questions of a split read with a command's ReadOptions (its image column, bad-row
// policy and line cap), at most max_rows rows (<= 0: all).
MatchingSourceOptions matching_source_options(const source::ReadOptions& read, int64_t max_rows,
                                              const std::string& flag = "--validation_file");

// The file or folder to read matching questions from for split `path`, or "" when it lacks the shape.
std::string matching_data_of(const std::string& path, const MatchingSourceOptions& o);

// A matching set with each row's description for predictions.jsonl ("line" for JSONL, "row" for parquet).
struct OpenedMatching {
  MatchingSet set;
  std::vector<nlohmann::ordered_json> where;  // per set row
  size_t bad = 0;                             // rows left out under on_bad skip
};

// Opens matching_data_of(path) (or `path` itself when it is that data); bad rows follow o.on_bad. Data that is
// neither (a captions CSV, a folder without matching.jsonl, tar shards) throws one line saying what the task reads.
OpenedMatching open_matching(const std::string& path, const MatchingSourceOptions& o);

}  // namespace bt::eval

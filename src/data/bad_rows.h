// What a data source does with a row/sample it cannot use (bad JSON line, missing caption, truncated tar
// member), and the tally it keeps so the loader can report "skipped 3 bad samples: ...".
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace bt::data {

enum class OnBad { kError, kSkip };

// Parses "error" / "skip" (the --on_bad_sample flag values); throws bt::Error naming `flag` otherwise.
OnBad parse_on_bad(const std::string& value, const std::string& flag = "--on_bad_sample");

struct BadRows {
  static constexpr size_t kMaxReasons = 5;
  size_t count = 0;
  std::vector<std::string> first;  // the first kMaxReasons reasons, each "file:line: why"

  void add(std::string reason) {
    ++count;
    if (first.size() < kMaxReasons) first.push_back(std::move(reason));
  }
  void merge(const BadRows& o) {
    count += o.count;
    for (const auto& r : o.first)
      if (first.size() < kMaxReasons) first.push_back(r);
  }
};

}  // namespace bt::data

// Finds added tokens in text in time linear in the text, whatever their number (a tokenizer.json may add tens of
// thousands): an Aho-Corasick automaton over their contents finds the first position where any of them ends; the
// leftmost-longest match is then among the starts at most one token length before it, checked with the trie.
// Semantics are those of the scan it replaces: the earliest start wins, ties go to the longest content, and
// among equal contents the first in the list.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bt::text {

class AddedMatcher {
 public:
  void build(const std::vector<std::string>& contents);  // empty contents are ignored
  bool empty() const { return max_len_ == 0; }
  // The leftmost-longest content occurring at or after `pos`: {start, index into contents}; {npos, -1} if none.
  std::pair<size_t, int> find(std::string_view text, size_t pos) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> next;  // sorted by byte
    int32_t fail = 0;
    int32_t token = -1;   // index of the content ending exactly here
    bool output = false;  // some content ends here or at a suffix (fail chain)
  };
  int32_t child(int32_t node, uint8_t c) const;
  int32_t step(int32_t node, uint8_t c) const;  // the automaton's transition (child, else along fail links)
  std::vector<Node> nodes_;
  size_t max_len_ = 0;
};

}  // namespace bt::text

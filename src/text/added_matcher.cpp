#include "text/added_matcher.h"

#include <algorithm>
#include <deque>

namespace bt::text {

int32_t AddedMatcher::child(int32_t node, uint8_t c) const {
  const auto& n = nodes_[size_t(node)].next;
  auto it = std::lower_bound(n.begin(), n.end(), std::pair<uint8_t, int32_t>{c, INT32_MIN});
  return it != n.end() && it->first == c ? it->second : -1;
}

int32_t AddedMatcher::step(int32_t node, uint8_t c) const {
  for (;;) {
    if (int32_t ch = child(node, c); ch >= 0) return ch;
    if (node == 0) return 0;
    node = nodes_[size_t(node)].fail;
  }
}

void AddedMatcher::build(const std::vector<std::string>& contents) {
  nodes_.assign(1, Node{});
  max_len_ = 0;
  for (size_t i = 0; i < contents.size(); ++i) {
    if (contents[i].empty()) continue;
    int32_t node = 0;
    for (unsigned char c : contents[i]) {
      int32_t ch = child(node, c);
      if (ch < 0) {
        ch = int32_t(nodes_.size());
        auto& next = nodes_[size_t(node)].next;  // (taken before push_back may move nodes_)
        next.insert(std::lower_bound(next.begin(), next.end(), std::pair<uint8_t, int32_t>{c, INT32_MIN}), {c, ch});
        nodes_.push_back(Node{});
      }
      node = ch;
    }
    if (nodes_[size_t(node)].token < 0) nodes_[size_t(node)].token = int32_t(i);  // first of equal contents wins
    max_len_ = std::max(max_len_, contents[i].size());
  }
  // Failure links breadth first: a node's fail is the longest proper suffix of its path that is a trie path.
  std::deque<int32_t> queue;
  for (auto [c, ch] : nodes_[0].next) {
    nodes_[size_t(ch)].fail = 0;
    queue.push_back(ch);
  }
  while (!queue.empty()) {
    const int32_t node = queue.front();
    queue.pop_front();
    Node& n = nodes_[size_t(node)];
    n.output = n.token >= 0 || nodes_[size_t(n.fail)].output;
    for (auto [c, ch] : n.next) {
      nodes_[size_t(ch)].fail = node == 0 ? 0 : step(nodes_[size_t(node)].fail, c);
      queue.push_back(ch);
    }
  }
}

std::pair<size_t, int> AddedMatcher::find(std::string_view text, size_t pos) const {
  if (empty()) return {std::string_view::npos, -1};
  int32_t state = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    state = step(state, static_cast<unsigned char>(text[i]));
    if (!nodes_[size_t(state)].output) continue;
    // i is the first end of any match: every match starting earlier than i + 1 - max_len_ would end before i.
    const size_t first = std::max(pos, i + 1 >= max_len_ ? i + 1 - max_len_ : size_t(0));
    for (size_t s = first; s <= i; ++s) {
      int32_t node = 0, best = -1;
      for (size_t k = s; k < text.size(); ++k) {
        node = child(node, static_cast<unsigned char>(text[k]));
        if (node < 0) break;
        if (nodes_[size_t(node)].token >= 0) best = nodes_[size_t(node)].token;  // deeper = longer
      }
      if (best >= 0) return {s, best};
    }
  }
  return {std::string_view::npos, -1};
}

}  // namespace bt::text

// Flags whose value is one of a few words, stored as an enum where the command line is read: the word is turned
// into the enum once, here, and nothing downstream compares strings. An unknown word fails with
// "--flag must be a, b or c (got 'x')". A plain (non-optional) target's value is the default --help shows.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"

namespace bt::cli {

template <typename E>
using EnumWords = std::vector<std::pair<std::string, E>>;

// "a", "a or b", "a, b or c".
template <typename E>
std::string enum_word_list(const EnumWords<E>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i)
    s += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i].first;
  return s;
}

// The word of `value` in `words` ("" when absent).
template <typename E>
std::string enum_word(const EnumWords<E>& words, E value) {
  for (const auto& [word, e] : words)
    if (e == value) return word;
  return "";
}

// Target: E (keeps its current value as the default) or std::optional<E> (unset unless the flag is given). `name` may
// list aliases ("--eval_strategy,--evaluation_strategy"); errors name the first.
template <typename Target, typename E>
CLI::Option* add_enum_flag(CLI::App& app, const std::string& name, Target& target, EnumWords<E> words,
                           const std::string& help) {
  CLI::Option* opt = app.add_option_function<std::string>(
      name,
      [&target, words, flag = name.substr(0, name.find(','))](const std::string& v) {
        for (const auto& [word, e] : words)
          if (word == v) {
            target = e;
            return;
          }
        fail(flag, " must be ", enum_word_list(words), " (got '", v, "')");
      },
      help);
  if constexpr (std::is_same_v<Target, E>) opt->default_str(enum_word(words, target));
  return opt;
}

}  // namespace bt::cli

// Caption text that says what a synthetic cartoon shows (scene, people, hats, wall items, furniture), so that a
// model trained on the synthetic data can learn something that generalises to held-out pictures; the quip of
// synth_captions.cpp follows as decoration, as a contest caption would.
#include <array>
#include <string>
#include <vector>

#include "data/synth.h"
#include "data/synth_draw.h"

namespace bt::data::synth {

namespace {

const char* number_word(int n) {
  static const std::array<const char*, 6> words = {"no", "one", "two", "three", "four", "five"};
  return n >= 0 && n < int(words.size()) ? words[size_t(n)] : "many";
}

// "a window", "two windows"
std::string counted(int n, const char* one, const char* many) {
  return n == 1 ? std::string("a ") + one : std::string(number_word(n)) + " " + many;
}

// "a, b and c"
std::string join_and(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

std::string people(const SceneFacts& f, Rng& r) {
  static const std::array<const char*, 3> singular = {"A man", "A person", "A lone figure"};
  static const std::array<const char*, 3> plural = {"people", "figures", "men"};
  std::string who = f.figures == 1 ? singular[size_t(r.range(0, 2))]
                                   : std::string(number_word(f.figures)) + " " + plural[size_t(r.range(0, 2))];
  if (f.figures > 1) who[0] = char(who[0] - 'a' + 'A');
  std::string hats;
  if (f.hats == 0) hats = f.figures == 1 ? " without a hat" : ", none wearing a hat,";
  else if (f.hats == f.figures) hats = f.figures == 1 ? " in a hat" : ", all wearing hats,";
  else hats = std::string(", ") + number_word(f.hats) + " in a hat,";
  return who + hats;
}

std::string place(const SceneFacts& f, Rng& r) {
  if (f.outdoor) return r.chance(0.5) ? "on a desert island with a palm tree" : "on a tiny island under a palm tree";
  std::vector<std::string> items;
  if (f.windows) items.push_back(counted(f.windows, "window", "windows"));
  if (f.pictures) items.push_back(counted(f.pictures, "framed picture", "framed pictures"));
  if (f.shelves) items.push_back(counted(f.shelves, "bookshelf", "bookshelves"));
  if (f.table) items.push_back(f.cup ? "a table with a cup" : "a bare table");
  return std::string(r.chance(0.5) ? "in a room with " : "in an office with ") + join_and(items);
}

std::string balloon(const SceneFacts& f, Rng& r) {
  if (f.balloon < 0) return "";
  static const std::array<const char*, 3> where = {"at the upper left", "at the top centre", "at the upper right"};
  const std::string colour = accent_colours().at(size_t(f.balloon)).name;
  const std::string place = where.at(size_t(f.balloon_side));
  return r.chance(0.5) ? " A " + colour + " balloon floats " + place + "." : " A " + colour + " balloon " + place + ".";
}

}  // namespace

std::string scene_key(const SceneFacts& f) {
  std::string key = f.balloon < 0 ? "" : std::to_string(f.balloon) + "@" + std::to_string(f.balloon_side) + "/";
  if (f.outdoor) return key + "island/" + std::to_string(f.figures) + "/" + std::to_string(f.hats);
  return key + "room/" + std::to_string(f.figures) + "/" + std::to_string(f.hats) + "/" + std::to_string(f.windows) +
         std::to_string(f.pictures) + std::to_string(f.shelves) + "/" + std::to_string(int(f.table) + int(f.cup));
}

std::string describe_scene(const SceneFacts& f, uint64_t seed) {
  Rng r(seed);
  std::string out = people(f, r);
  out += ' ';
  out += place(f, r);
  out += '.';
  out += balloon(f, r);
  return out;
}

}  // namespace bt::data::synth

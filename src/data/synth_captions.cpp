// Caption text for the synthetic cartoons: New-Yorker-ish quips stitched from phrase lists, cut to a drawn
// length of 10-25 words.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "data/synth.h"
#include "data/synth_draw.h"

namespace bt::data {

namespace {
using L = std::vector<std::string_view>;
const L kOpeners = {"Honestly,", "Frankly,", "Look,", "Relax,", "Darling,", "Listen,", "Well,", "Of course", "Apparently",
                    "To be fair,", "Between us,", "For the record,", "In my defense,", "Trust me,", "Sadly,"};
const L kSubjects = {"the board", "my therapist", "your mother", "the committee", "this island", "the cat", "our lawyer",
                     "management", "the algorithm", "my agent", "the landlord", "everyone at brunch", "the dog",
                     "the new intern", "my accountant", "the universe", "the robot", "our neighbors", "the king",
                     "the penguins"};
const L kVerbs = {"says", "thinks", "insists", "suspects", "decided", "warned me", "promised", "finally admitted",
                  "keeps telling me", "would prefer", "has concluded", "never mentioned", "just announced"};
const L kClauses = {"we should have taken the stairs", "this meeting could have been an email",
                    "the quarterly numbers are mostly vibes", "nobody reads the fine print anymore",
                    "the soup is a metaphor", "we are technically still on vacation", "I am the problem here",
                    "the desert island was a lateral move", "it is a bold choice for a Tuesday",
                    "we need to talk about the elephant", "the couch is not a career", "this is fine",
                    "the rent includes a moat", "my inner child wants a refund", "the plan was mostly snacks",
                    "the cloud is just somebody else's basement", "the portrait follows me around",
                    "we have reached the end of the internet", "the fish are unionizing", "I am between castles",
                    "the parrot knows too much", "the weather is a personal attack", "I left my dignity in the car",
                    "you are standing on my metaphor", "there is no wifi in purgatory"};
const L kTails = {"and frankly I agree", "so pack a sweater", "but only on weekends", "which explains the hat",
                  "so act natural", "and that is why we moved", "until the lawyers arrive", "if you ask nicely",
                  "but not in that tone", "and I have the receipts", "so please stop waving", "and then it rained",
                  "according to the brochure", "at least in theory", "for tax reasons"};

template <class Rng>
std::string_view pick(Rng& r, const L& l) {
  return l[r.range(0, int(l.size()) - 1)];
}

void append_words(std::vector<std::string>& words, std::string_view phrase) {
  size_t p = 0;
  while (p < phrase.size()) {
    size_t q = phrase.find(' ', p);
    if (q == std::string_view::npos) q = phrase.size();
    if (q > p) words.emplace_back(phrase.substr(p, q - p));
    p = q + 1;
  }
}
}  // namespace

std::string synth_caption(uint64_t seed) {
  synth::Rng r(seed);
  size_t target = size_t(r.range(10, 25));
  std::vector<std::string> words;
  if (r.chance(0.5)) append_words(words, pick(r, kOpeners));
  while (words.size() < target) {
    append_words(words, pick(r, kSubjects));
    append_words(words, pick(r, kVerbs));
    append_words(words, pick(r, kClauses));
    if (words.size() < target) append_words(words, pick(r, kTails));
    if (words.size() < target) words.emplace_back(r.chance(0.5) ? "and" : "because");
  }
  words.resize(target);
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i];
    if (i == 0 && w[0] >= 'a' && w[0] <= 'z') w[0] = char(w[0] - 'a' + 'A');
    while (i + 1 == words.size() && !w.empty() && (w.back() == ',' || w.back() == '.')) w.pop_back();
    out += (i ? " " : "") + w;
  }
  out += r.chance(0.2) ? "?" : ".";
  return out;
}

}  // namespace bt::data

// Tokens/s of Tokenizer::encode on caption-like text with the real GPT-2 vocabulary (the RoBERTa merges), one
// thread, merge cache warm (every word of the captions has been seen once before timing starts), as in a
// training run after the first batches. Run: build/bench/text/bench_tokenizer
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "text/tokenizer.h"
#include "text/train_bpe.h"

namespace {

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    std::exit(1);
  }
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  gzclose(f);
  return out;
}

const bt::text::Tokenizer& gpt2() {
  static const bt::text::Tokenizer tok = [] {
    auto dir = std::filesystem::temp_directory_path() / "bt_bench_tokenizer";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "vocab.json", std::ios::binary) << gunzip(BT_TEXT_FIXTURES "/gpt2/encoder.json.gz");
    std::ofstream(dir / "merges.txt", std::ios::binary) << gunzip(BT_TEXT_FIXTURES "/gpt2/vocab.bpe.gz");
    auto t = bt::text::Tokenizer::from_files((dir / "vocab.json").string(), (dir / "merges.txt").string());
    std::filesystem::remove_all(dir);
    return t;
  }();
  return tok;
}

// Deterministic COCO-like captions: ~12 words, mixed case, punctuation, the odd number.
std::vector<std::string> captions(size_t n) {
  const char* subj[] = {"A man", "Two dogs", "A young woman", "A group of people", "An old red truck", "The cat",
                        "A little girl", "Several birds", "A baseball player", "A plate of food"};
  const char* verb[] = {"is sitting on", "are running across", "stands next to", "is riding", "looks at",
                        "is parked near", "plays with", "flies over", "holds", "rests beside"};
  const char* obj[] = {"a wooden bench", "the grassy field", "a large white building", "a skateboard",
                       "the kitchen counter", "a busy city street", "a frisbee", "the ocean waves",
                       "a bowl of fruit", "two bicycles"};
  const char* tail[] = {".", " in the park.", ", smiling.", " at night.", " on a sunny day!", " near 3 cars.",
                        " while it rains.", " (close-up).", " in 2019.", "."};
  std::vector<std::string> out;
  uint32_t s = 7;
  auto r = [&] { return (s = s * 1664525u + 1013904223u) >> 16; };
  for (size_t i = 0; i < n; ++i)
    out.push_back(std::string(subj[r() % 10]) + " " + verb[r() % 10] + " " + obj[r() % 10] + tail[r() % 10]);
  return out;
}

void BM_EncodeCaptions(benchmark::State& state) {
  const auto& tok = gpt2();
  auto texts = captions(4096);
  for (auto& t : texts) tok.encode(t);  // warm the merge cache
  size_t tokens = 0;
  for (auto _ : state) {
    for (auto& t : texts) {
      auto ids = tok.encode(t, true, 128);
      tokens += ids.size();
      benchmark::DoNotOptimize(ids.data());
    }
  }
  state.counters["tokens/s"] = benchmark::Counter(double(tokens), benchmark::Counter::kIsRate);
  state.counters["captions/s"] =
      benchmark::Counter(double(texts.size() * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EncodeCaptions)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The trainer's call: a batch of 256 captions, truncated/padded to 128, on 1 or 2 threads, with the demo's
// trained 1000-token vocabulary (GPT-2's has no <pad>). Real time: threads only help the wall clock.
void BM_EncodeBatch(benchmark::State& state) {
  auto texts = captions(256);
  static const auto tok = bt::text::train_tokenizer(captions(4096), 1000);
  tok.encode_batch(texts, 128, bt::text::Padding::kLongest, 1);
  size_t tokens = 0;
  for (auto _ : state) {
    auto b = tok.encode_batch(texts, 128, bt::text::Padding::kLongest, int(state.range(0)));
    for (int64_t m : b.attention_mask) tokens += size_t(m);
  }
  state.counters["tokens/s"] = benchmark::Counter(double(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EncodeBatch)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

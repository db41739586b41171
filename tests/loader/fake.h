// Test doubles for the loader: an in-memory Dataset whose rows share images, with bad and unreadable rows
// on demand and optional random delays (so workers finish out of order), and a cheap deterministic
// SampleTransform whose output depends on every input byte and on the sample seed.
#pragma once
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "data/dataset.h"
#include "loader/sample_transform.h"

namespace bt::loader::test {

class FakeDataset : public data::Dataset {
 public:
  FakeDataset(size_t n, size_t n_images, std::set<size_t> bad = {}, std::set<size_t> missing = {},
              int max_delay_us = 0)
      : bad_(std::move(bad)), missing_(std::move(missing)), max_delay_us_(max_delay_us) {
    for (size_t i = 0; i < n; ++i) {
      captions_.push_back("caption of row " + std::to_string(i));
      keys_.push_back("img" + std::to_string(i % n_images) + ".jpg");
    }
  }
  size_t size() const override { return captions_.size(); }
  const std::string& caption(size_t i) const override { return captions_.at(i); }
  const std::string& image_key(size_t i) const override { return keys_.at(i); }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override {
    reads.fetch_add(1);
    if (max_delay_us_ > 0) {
      thread_local std::mt19937 rng(std::hash<std::thread::id>{}(std::this_thread::get_id()));
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % static_cast<unsigned>(max_delay_us_)));
    }
    if (missing_.count(i)) fail("fake.jsonl:", i + 1, ": image '", keys_[i], "': No such file or directory");
    if (bad_.count(i)) {
      bytes.assign({'B', 'A', 'D'});
      return;
    }
    // The "encoded" bytes depend on the image only, so rows sharing an image decode alike.
    const std::string& k = keys_[i];
    bytes.assign(k.begin(), k.end());
    for (int j = 0; j < 13; ++j) bytes.push_back(static_cast<uint8_t>(j * 31 + k.size()));
  }
  std::string describe(size_t i) const override { return "fake.jsonl:" + std::to_string(i + 1) + " (" + keys_[i] + ")"; }

  mutable std::atomic<size_t> reads{0};

 private:
  std::vector<std::string> captions_, keys_;
  std::set<size_t> bad_, missing_;
  int max_delay_us_;
};

class FakeTransform : public SampleTransform {
 public:
  void to_u8(std::span<const uint8_t> encoded, const media::TransformSpec& spec, uint64_t seed, uint8_t* out,
             media::TransformTiming* timing) override {
    if (encoded.size() >= 3 && std::memcmp(encoded.data(), "BAD", 3) == 0) fail("not a JPEG or PNG image");
    const size_t n = static_cast<size_t>(spec.image_size) * spec.image_size * 3;
    const uint64_t s = spec.mode == media::TransformMode::kTrain ? seed : 0;
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<uint8_t>(encoded[i % encoded.size()] * (i + 1) + (s >> (8 * (i % 8))));
    if (timing) timing->decode_s += 1e-6;
  }
  void normalize(const uint8_t* hwc, const media::TransformSpec& spec, float* chw) override {
    const size_t plane = static_cast<size_t>(spec.image_size) * spec.image_size;
    for (size_t p = 0; p < plane; ++p)
      for (int c = 0; c < 3; ++c) chw[c * plane + p] = hwc[p * 3 + c] / 255.0f - 0.5f;
  }
};

inline TransformFactory fake_factory() {
  return [] { return std::unique_ptr<SampleTransform>(new FakeTransform); };
}

}  // namespace bt::loader::test

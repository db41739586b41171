// Synthetic dataset generation (see synth.h): planning rows, rendering + encoding images in parallel, and
// writing the folder or tar-shard layout.
#include "data/synth.h"

#include <archive.h>
#include <archive_entry.h>
#include <turbojpeg.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/error.h"
#include "data/synth_draw.h"

namespace fs = std::filesystem;

namespace bt::data {

namespace {

size_t image_count(const SynthOptions& o) {
  size_t n = std::max<size_t>(o.n, 1);
  size_t k = o.images ? o.images : std::max<size_t>(1, n / 4);
  return std::min(k, n);
}

void check(const SynthOptions& o) {
  if (o.n == 0) fail("--n: must be at least 1");
  if (o.min_width < 16 || o.max_width < o.min_width || o.max_width > 16384)
    fail("--min_width/--max_width: need 16 <= min_width <= max_width <= 16384 (got ", o.min_width, ", ", o.max_width, ")");
  if (!(o.min_aspect > 0.05 && o.max_aspect >= o.min_aspect && o.max_aspect < 20))
    fail("synth: aspect range must satisfy 0.05 < min <= max < 20");
  if (o.quality < 1 || o.quality > 100) fail("--quality: must be in 1..100 (got ", o.quality, ")");
  if (o.tar && o.shard_size == 0) fail("--shard_size: must be at least 1");
}

// The random choices every image starts with: its size; `r` then continues into the drawing.
void image_size(const SynthOptions& o, synth::Rng& r, int& w, int& h) {
  w = r.range(o.min_width, o.max_width);
  double aspect = r.uniform(o.min_aspect, o.max_aspect);
  h = std::max(8, int(std::lround(w / aspect)));
}

synth::Rng image_rng(const SynthOptions& o, size_t index) { return synth::Rng(synth::mix_seed(o.seed, 3, index)); }

// What image `index` shows, from a dry run of its drawing (no pixels).
synth::SceneFacts scene_facts(const SynthOptions& o, size_t index) {
  synth::Rng r = image_rng(o, index);
  int w, h;
  image_size(o, r, w, h);
  synth::Canvas dry(w, h, /*dry=*/true);
  synth::SceneFacts facts = synth::draw_cartoon(dry, r);
  if (o.accents) {  // its own stream, so the drawing is the same with and without accents
    synth::Rng a(synth::mix_seed(o.seed, 6, index));
    facts.balloon = a.range(0, int(synth::accent_colours().size()) - 1);
    facts.balloon_side = a.range(0, 2);
  }
  return facts;
}

std::string row_key(size_t row) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06zu", row);
  return buf;
}

// Renders images [0, count) on `threads` workers; sink(index, jpeg) runs on the worker that made it.
void render_parallel(const SynthOptions& opts, size_t count,
                     const std::function<void(size_t, std::vector<uint8_t>&&)>& sink, const SynthProgress& progress) {
  size_t threads = opts.threads > 0 ? size_t(opts.threads) : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, count);
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t done = 0;
  std::exception_ptr error;
  auto work = [&] {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= count) return;
      try {
        sink(i, synth_jpeg(opts, i));
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next = count;
        return;
      }
      std::lock_guard lock(mu);
      ++done;
      if (progress) progress(done, count);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

class SynthDataset : public Dataset {
 public:
  SynthDataset(SynthPlan plan, std::vector<std::vector<uint8_t>> jpegs) : plan_(std::move(plan)), jpegs_(std::move(jpegs)) {
    for (size_t i = 0; i < jpegs_.size(); ++i) keys_.push_back("synth:" + std::to_string(i));
  }
  size_t size() const override { return plan_.captions.size(); }
  const std::string& caption(size_t i) const override { return plan_.captions.at(i); }
  const std::string& image_key(size_t i) const override { return keys_[plan_.image_of_row.at(i)]; }
  void read_image(size_t i, std::vector<uint8_t>& bytes) const override { bytes = jpegs_[plan_.image_of_row.at(i)]; }
  std::string describe(size_t i) const override { return str("synth row ", i, " (image ", plan_.image_of_row.at(i), ")"); }

 private:
  SynthPlan plan_;
  std::vector<std::vector<uint8_t>> jpegs_;
  std::vector<std::string> keys_;
};

void write_bytes(const std::string& path, const void* data, size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(static_cast<const char*>(data), std::streamsize(size));
  if (!f) fail(path, ": cannot write (disk full or no permission?)");
}

void tar_add(archive* a, const std::string& name, const void* data, size_t size, const std::string& shard) {
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, name.c_str());
  archive_entry_set_size(e, la_int64_t(size));
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_perm(e, 0644);
  archive_entry_set_mtime(e, 0, 0);  // fixed, so shards are byte-identical across runs
  bool ok = archive_write_header(a, e) == ARCHIVE_OK && archive_write_data(a, data, size) == la_ssize_t(size);
  archive_entry_free(e);
  if (!ok) fail(shard, ": cannot write member '", name, "': ", archive_error_string(a));
}

}  // namespace

SynthPlan synth_plan(const SynthOptions& opts) {
  check(opts);
  SynthPlan plan;
  plan.images = image_count(opts);
  synth::Rng r(synth::mix_seed(opts.seed, 1));
  plan.image_of_row.resize(opts.n);
  for (size_t i = 0; i < opts.n; ++i)
    plan.image_of_row[i] = uint32_t(i < plan.images ? i : r.next() % plan.images);
  for (size_t i = opts.n; i > 1; --i) std::swap(plan.image_of_row[i - 1], plan.image_of_row[r.next() % i]);
  std::vector<synth::SceneFacts> facts(plan.images);
  for (size_t k = 0; k < plan.images; ++k) {
    facts[k] = scene_facts(opts, k);
    plan.scene_of_image.push_back(synth::scene_key(facts[k]));
  }
  plan.captions.reserve(opts.n);
  for (size_t i = 0; i < opts.n; ++i) {
    const auto& f = facts[plan.image_of_row[i]];
    plan.captions.push_back(synth::describe_scene(f, synth::mix_seed(opts.seed, 4, i)) + " \"" +
                            synth_caption(synth::mix_seed(opts.seed, 2, i)) + "\"");
  }
  return plan;
}

std::vector<MatchingRow> synth_matching(const SynthPlan& plan, uint64_t seed) {
  const size_t n = plan.captions.size();
  std::vector<MatchingRow> rows(n);
  synth::Rng r(synth::mix_seed(seed, 5));
  for (size_t i = 0; i < n; ++i) {
    MatchingRow& m = rows[i];
    m.image = plan.image_of_row[i];
    const std::string& truth = plan.scene_of_image[m.image];
    // Distractors: rows whose picture states other facts, each scene at most once, probed from a random start.
    std::vector<std::string> used{truth};
    const size_t start = size_t(r.next() % n);
    for (size_t k = 0; k < n && m.choices.size() < 4; ++k) {
      const size_t j = (start + k) % n;
      const std::string& scene = plan.scene_of_image[plan.image_of_row[j]];
      if (std::find(used.begin(), used.end(), scene) != used.end()) continue;
      used.push_back(scene);
      m.choices.push_back(plan.captions[j]);
    }
    m.label = int(r.next() % (m.choices.size() + 1));
    m.choices.insert(m.choices.begin() + m.label, plan.captions[i]);
  }
  return rows;
}

std::vector<uint8_t> synth_jpeg(const SynthOptions& opts, size_t index, int* width, int* height) {
  check(opts);
  synth::Rng r = image_rng(opts, index);
  int w, h;
  image_size(opts, r, w, h);
  synth::Canvas canvas(w, h);
  synth::draw_cartoon(canvas, r);
  uint8_t paper[3] = {uint8_t(r.range(242, 249)), 0, 0};
  paper[1] = uint8_t(paper[0] - r.range(2, 6));
  paper[2] = uint8_t(paper[1] - r.range(6, 14));
  std::vector<uint8_t> rgb;
  canvas.to_rgb(paper, opts.grain, r.next(), rgb);
  if (opts.accents) synth::paint_balloon(scene_facts(opts, index), w, h, rgb);

  tjhandle tj = tjInitCompress();
  if (!tj) fail("synth: TurboJPEG init failed");
  unsigned char* out = nullptr;
  unsigned long size = 0;
  int rc = tjCompress2(tj, rgb.data(), w, 0, h, TJPF_RGB, &out, &size, TJSAMP_420, opts.quality, TJFLAG_ACCURATEDCT);
  std::string err = rc ? tjGetErrorStr2(tj) : "";
  tjDestroy(tj);
  if (rc) {
    tjFree(out);
    fail("synth: JPEG encode failed: ", err);
  }
  std::vector<uint8_t> jpeg(out, out + size);
  tjFree(out);
  if (width) *width = w;
  if (height) *height = h;
  return jpeg;
}

std::vector<std::vector<uint8_t>> synth_all_jpegs(const SynthOptions& opts, size_t images, const SynthProgress& progress) {
  std::vector<std::vector<uint8_t>> out(images);
  render_parallel(opts, images, [&](size_t i, std::vector<uint8_t>&& j) { out[i] = std::move(j); }, progress);
  return out;
}

std::unique_ptr<Dataset> synth_dataset(const SynthOptions& opts) {
  SynthPlan plan = synth_plan(opts);
  auto jpegs = synth_all_jpegs(opts, plan.images);
  return std::make_unique<SynthDataset>(std::move(plan), std::move(jpegs));
}

void write_synth(const std::string& dir, const SynthOptions& opts, const SynthProgress& progress) {
  SynthPlan plan = synth_plan(opts);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(dir, ": cannot create folder: ", ec.message());
  if (!opts.tar) {
    fs::create_directories(fs::path(dir) / "images", ec);
    if (ec) fail(dir, "/images: cannot create folder: ", ec.message());
    render_parallel(opts, plan.images, [&](size_t i, std::vector<uint8_t>&& j) {
      write_bytes((fs::path(dir) / "images" / (row_key(i) + ".jpg")).string(), j.data(), j.size());
    }, progress);
    std::string jsonl;
    for (size_t i = 0; i < opts.n; ++i) {
      nlohmann::ordered_json row;
      row["image"] = "images/" + row_key(plan.image_of_row[i]) + ".jpg";
      row["caption"] = plan.captions[i];
      jsonl += row.dump() + "\n";
    }
    write_bytes((fs::path(dir) / "captions.jsonl").string(), jsonl.data(), jsonl.size());
    std::string matching;
    for (const MatchingRow& m : synth_matching(plan, opts.seed)) {
      nlohmann::ordered_json row;
      row["image"] = "images/" + row_key(m.image) + ".jpg";
      row["caption_choices"] = m.choices;
      row["label"] = std::string(1, char('A' + m.label));
      matching += row.dump() + "\n";
    }
    write_bytes((fs::path(dir) / "matching.jsonl").string(), matching.data(), matching.size());
    return;
  }
  auto jpegs = synth_all_jpegs(opts, plan.images, progress);
  for (size_t s = 0; s * opts.shard_size < opts.n; ++s) {
    std::string shard = (fs::path(dir) / ("shard-" + row_key(s) + ".tar")).string();
    archive* a = archive_write_new();
    archive_write_set_format_ustar(a);
    archive_write_set_bytes_in_last_block(a, 1);
    if (archive_write_open_filename(a, shard.c_str()) != ARCHIVE_OK) {
      std::string err = archive_error_string(a);
      archive_write_free(a);
      fail(shard, ": cannot create: ", err);
    }
    try {
      for (size_t i = s * opts.shard_size; i < std::min(opts.n, (s + 1) * opts.shard_size); ++i) {
        const auto& j = jpegs[plan.image_of_row[i]];
        tar_add(a, row_key(i) + ".jpg", j.data(), j.size(), shard);
        tar_add(a, row_key(i) + ".txt", plan.captions[i].data(), plan.captions[i].size(), shard);
      }
    } catch (...) {
      archive_write_free(a);
      throw;
    }
    bool ok = archive_write_close(a) == ARCHIVE_OK;
    archive_write_free(a);
    if (!ok) fail(shard, ": cannot finish writing");
  }
}

}  // namespace bt::data

// bridgetune._native: the pybind11 binding of the loader, tokenizer and media transform. Tensors leave as DLPack
// capsules (dlpack_export.h); bridgetune/__init__.py wraps them with torch.utils.dlpack.from_dlpack. Every call that
// does C++ work releases the GIL; bt::Error becomes bridgetune.Error (a RuntimeError) with the same one-line text.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fstream>
#include <iterator>
#include <span>

#include "common/defaults.h"
#include "common/error.h"
#include "hub/hub.h"
#include "loader/sampler.h"
#include "media/transform.h"
#include "python/dlpack_export.h"
#include "python/loader_core.h"
#include "python/model_folder.h"
#include "text/tokenizer.h"
#include "common/file_gate.h"
#include "data/captions_parse.h"

namespace pyb = pybind11;
using namespace pybind11::literals;

namespace bt::py {
namespace {

pyb::object capsule(std::shared_ptr<void> owner, void* data, DType dtype, std::vector<int64_t> shape) {
  return pyb::reinterpret_steal<pyb::object>(make_dlpack_capsule(std::move(owner), data, dtype, std::move(shape)));
}

// Ctrl-C during a blocking call: Python's handler only sets a flag, so look at it once the GIL is back.
void raise_pending_signal() {
  if (PyErr_CheckSignals() != 0) throw pyb::error_already_set();
}

pyb::dict tokens_dict(std::shared_ptr<void> owner, text::BatchEncoding& enc) {
  pyb::dict d;
  d["input_ids"] = capsule(owner, enc.input_ids.data(), DType::kInt64, {enc.batch, enc.length});
  d["attention_mask"] = capsule(owner, enc.attention_mask.data(), DType::kInt64, {enc.batch, enc.length});
  return d;
}

// (batch dict, meta dict) or None at the end of the epoch.
pyb::object next_batch(LoaderCore& core) {
  std::shared_ptr<Held> h;
  {
    pyb::gil_scoped_release nogil;
    h = core.next();
  }
  raise_pending_signal();
  if (!h) return pyb::none();
  loader::Batch& b = *h->batch;
  pyb::dict batch;
  const int64_t B = b.size, S = b.image_size;
  batch["pixel_values"] = capsule(h, b.pixels.data(), DType::kFloat32, {B, 3, S, S});
  if (h->tokens) {
    batch.attr("update")(tokens_dict(h, *h->tokens));
  } else {
    pyb::list caps;
    for (const auto& c : b.captions) caps.append(pyb::str(c.data(), c.size()));  // invalid UTF-8 raises
    batch["captions"] = caps;
  }
  pyb::list image_keys;  // bytes: keys come from file data (paths, shard members) and need not be UTF-8
  for (const auto& k : b.image_keys) image_keys.append(pyb::bytes(k.data(), k.size()));
  pyb::dict meta("epoch"_a = b.epoch, "index"_a = b.index, "first_sample"_a = b.first_sample, "size"_a = b.size,
                 "rows"_a = b.rows, "image_keys"_a = image_keys, "skipped"_a = b.skipped);
  return pyb::make_tuple(batch, meta);
}

// Through the file gate: a FIFO or /dev/zero named as the image is refused, an image over the loader's byte cap too.
std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> bytes;
  read_regular_file(path, bytes, data::kDefaultMaxImageBytes);
  return bytes;
}

// One image (encoded bytes, or a path as str) -> float32 [3,S,S], as the loader makes it.
pyb::object preprocess(const pyb::object& src, int image_size,
                       const std::string& transform, uint64_t seed, int jpeg_dct_scaling, std::array<float, 3> mean,
                       std::array<float, 3> std, uint64_t max_image_pixels) {
  if (image_size < 1 || image_size > 16384) fail("image_size must be in 1..16384 (got ", image_size, ")");
  media::check_preprocess_size(image_size, true, "image_size", "image_size=");
  media::TransformSpec spec = transform_spec(image_size, transform, jpeg_dct_scaling, max_image_pixels);
  spec.mean = mean;
  spec.std = std;
  for (float v : std)
    if (!(v > 0)) fail("std: every value must be > 0");
  const size_t S = static_cast<size_t>(image_size);
  std::vector<uint8_t> bytes;
  std::string name = "image bytes";
  if (pyb::isinstance<pyb::bytes>(src)) {
    const std::string_view v = pyb::cast<std::string_view>(src);
    bytes.assign(v.begin(), v.end());
  } else {
    name = pyb::cast<std::string>(src);
    pyb::gil_scoped_release nogil;
    bytes = read_file(name);
  }
  auto out = std::make_shared<std::vector<float>>(3 * S * S);
  {
    pyb::gil_scoped_release nogil;
    std::vector<uint8_t> hwc(3 * S * S);
    auto scratch = media::make_scratch();
    try {
      media::transform_to_u8(bytes, spec, seed, hwc.data(), *scratch);
    } catch (const Error& e) {
      fail(name, ": ", e.what());
    }
    media::normalize_hwc_to_chw(hwc.data(), spec, out->data());
  }
  float* data = out->data();
  return capsule(out, data, DType::kFloat32, {3, image_size, image_size});
}

void bind_loader(pyb::module_& m) {
  pyb::class_<CoreOptions>(m, "LoaderOptions")
      .def(pyb::init<>())
      .def_readwrite("data", &CoreOptions::data)
      .def_readwrite("mix_data", &CoreOptions::mix_data)
      .def_readwrite("mix_weights", &CoreOptions::mix_weights)
      .def_readwrite("mix_stopping", &CoreOptions::mix_stopping)
      .def_readwrite("batch_size", &CoreOptions::batch_size)
      .def_readwrite("num_workers", &CoreOptions::num_workers)
      .def_readwrite("shuffle", &CoreOptions::shuffle)
      .def_readwrite("seed", &CoreOptions::seed)
      .def_readwrite("drop_last", &CoreOptions::drop_last)
      .def_readwrite("image_size", &CoreOptions::image_size)
      .def_readwrite("mean", &CoreOptions::mean)
      .def_readwrite("std", &CoreOptions::std)
      .def_readwrite("tokenizer_dir", &CoreOptions::tokenizer_dir)
      .def_readwrite("max_seq_length", &CoreOptions::max_seq_length)
      .def_readwrite("padding", &CoreOptions::padding)
      .def_readwrite("image_column", &CoreOptions::image_column)
      .def_readwrite("caption_column", &CoreOptions::caption_column)
      .def_readwrite("transform", &CoreOptions::transform)
      .def_readwrite("on_bad_sample", &CoreOptions::on_bad_sample)
      .def_readwrite("jpeg_dct_scaling", &CoreOptions::jpeg_dct_scaling)
      .def_readwrite("max_image_pixels", &CoreOptions::max_image_pixels)
      .def_readwrite("rank", &CoreOptions::rank)
      .def_readwrite("world_size", &CoreOptions::world_size)
      .def_readwrite("prefetch_batches", &CoreOptions::prefetch_batches)
      .def_readwrite("decoded_cache_mb", &CoreOptions::decoded_cache_mb)
      .def_readwrite("dedupe_images_in_batch", &CoreOptions::dedupe_images_in_batch);

  pyb::class_<LoaderCore, std::shared_ptr<LoaderCore>>(m, "Loader")
      .def(pyb::init([](const CoreOptions& o) {
             pyb::gil_scoped_release nogil;  // opening parquet or indexing tar shards reads files
             return std::make_shared<LoaderCore>(o);
           }),
           "options"_a)
      .def("batches_per_epoch", &LoaderCore::batches_per_epoch)
      .def("rows_per_epoch", &LoaderCore::rows_per_epoch)
      .def("dataset_size", &LoaderCore::dataset_size)
      .def("start", &LoaderCore::start, "epoch"_a, "position"_a, pyb::call_guard<pyb::gil_scoped_release>())
      .def("next", &next_batch)
      .def("stats", [](const LoaderCore& c) {
        loader::LoaderStats s = c.stats();
        return pyb::dict("samples"_a = s.samples, "skipped"_a = s.skipped, "first_skipped"_a = s.first_skipped,
                         "cache_hits"_a = s.cache_hits, "cache_misses"_a = s.cache_misses,
                         "decoded_with_warnings"_a = s.decoded_with_warnings);
      });
}

void bind_tokenizer(pyb::module_& m) {
  pyb::class_<text::Tokenizer>(m, "Tokenizer")
      .def(pyb::init([](const std::string& name, const std::string& revision, const std::string& cache_dir) {
             return open_tokenizer(name, {revision, cache_dir});
           }),
           "name_or_path"_a, "revision"_a = bt::defaults::kHubRevision, "cache_dir"_a = "", pyb::call_guard<pyb::gil_scoped_release>())
      .def("encode", [](const text::Tokenizer& t, const std::string& s, bool special, int max_length) {
             std::vector<int32_t> ids = t.encode(s, special, max_length);
             return std::vector<int64_t>(ids.begin(), ids.end());
           },
           "text"_a, "add_special_tokens"_a = true, "max_length"_a = 0)
      .def("encode_batch", [](const text::Tokenizer& t, std::vector<std::string> texts, int max_length,
                              const std::string& padding, bool special, int threads) {
             if (padding != "longest" && padding != "max_length")
               fail("padding: expected 'longest' or 'max_length', got '", padding, "'");
             if (max_length < 3) fail("max_length must be >= 3 (got ", max_length, ")");
             auto enc = std::make_shared<text::BatchEncoding>();
             {
               pyb::gil_scoped_release nogil;
               *enc = t.encode_batch(texts, max_length,
                                     padding == "longest" ? text::Padding::kLongest : text::Padding::kMaxLength,
                                     threads, special);
             }
             return tokens_dict(enc, *enc);
           },
           "texts"_a, "max_length"_a = bt::defaults::kMaxSeqLength, "padding"_a = "longest", "add_special_tokens"_a = true,
           "threads"_a = 1)
      .def("decode", [](const text::Tokenizer& t, std::vector<int64_t> ids, bool skip) { return t.decode(
             std::span<const int64_t>(ids), skip); }, "ids"_a, "skip_special_tokens"_a = false)
      .def_property_readonly("pad_token_id", &text::Tokenizer::pad_id)
      .def_property_readonly("vocab_size", &text::Tokenizer::vocab_size);
}

// Hub ids and model folders, resolved by the CLI's C++ (model_folder.h).
void bind_hub(pyb::module_& m) {
  m.def("resolve_model", [](const std::string& name, const std::string& revision, const std::string& cache_dir,
                            const std::string& what) { return resolve_model(name, {revision, cache_dir}, what); },
        "name"_a, "revision"_a = bt::defaults::kHubRevision, "cache_dir"_a = "", "what"_a = "", pyb::call_guard<pyb::gil_scoped_release>());
  m.def("image_settings", [](const std::string& name, const std::string& revision, const std::string& cache_dir) {
          const ImageSettings s = image_settings(name, {revision, cache_dir});
          return pyb::make_tuple(s.image_size, s.mean, s.std);
        },
        "name"_a, "revision"_a = bt::defaults::kHubRevision, "cache_dir"_a = "");
  m.def("resolve_dataset", [](const std::string& name, const std::string& config, const std::string& split,
                              const std::string& revision, const std::string& cache_dir) {
          return resolve_dataset(name, config, split, {revision, cache_dir});
        },
        "name"_a, "config"_a = "", "split"_a = "train", "revision"_a = bt::defaults::kHubRevision, "cache_dir"_a = "",
        pyb::call_guard<pyb::gil_scoped_release>());
  m.def("is_repo_id", &hub::is_repo_id, "s"_a);
}

}  // namespace
}  // namespace bt::py

PYBIND11_MODULE(_native, m) {
  using namespace bt::py;
  m.doc() = "bridgetune's C++ loader, tokenizer and media transform (use the bridgetune package, not this module)";
  pyb::register_exception<bt::Error>(m, "Error", PyExc_RuntimeError);
  bind_loader(m);
  bind_tokenizer(m);
  bind_hub(m);
  m.def("preprocess", &preprocess, "image"_a, "image_size"_a, "transform"_a, "seed"_a,
        "jpeg_dct_scaling"_a, "mean"_a, "std"_a, "max_image_pixels"_a = bt::media::kDefaultMaxImagePixels);
  m.def("sample_seed", &bt::loader::sample_seed, "seed"_a, "epoch"_a, "row"_a,
        "the train transform's seed of one sample (as the loader draws it)");
  m.def("clip_mean", [] { return std::array<float, 3>{bt::media::kClipMean[0], bt::media::kClipMean[1], bt::media::kClipMean[2]}; });
  m.def("clip_std", [] { return std::array<float, 3>{bt::media::kClipStd[0], bt::media::kClipStd[1], bt::media::kClipStd[2]}; });
  // The defaults the CLI's flags show (common/defaults.h): loader.py's signature reads them from here, so Python and
  // the CLI cannot drift apart.
  pyb::dict defaults;
  defaults["num_workers"] = bt::defaults::kNumWorkers;
  defaults["max_seq_length"] = bt::defaults::kMaxSeqLength;
  defaults["seed"] = bt::defaults::kSeed;
  defaults["image_column"] = bt::defaults::kImageColumn;
  defaults["on_bad_sample"] = bt::defaults::kOnBadSample;
  defaults["image_size"] = bt::defaults::kLoaderImageSize;
  defaults["per_device_train_batch_size"] = bt::defaults::kTrainBatchSize;
  defaults["per_device_eval_batch_size"] = bt::defaults::kEvalBatchSize;
  defaults["device"] = bt::defaults::kDevice;
  defaults["prefetch_batches"] = bt::defaults::kPrefetchBatches;
  defaults["decoded_cache_mb"] = bt::defaults::kDecodedCacheMb;
  defaults["revision"] = bt::defaults::kHubRevision;
  m.attr("DEFAULTS") = defaults;
}

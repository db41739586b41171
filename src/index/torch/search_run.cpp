// `bridgetune search` (see index/embed_index.h): a text ranks the index's images, an image file ranks its texts;
// exact search (one matrix product), printed as a table or JSON lines, and a contact sheet of the top images.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"
#include "common/terminal.h"
#include "data/captions_dataset.h"
#include "eval/torch/embed_eval.h"
#include "media/npy.h"
#include "model/api.h"
#include "model/device.h"
#include "report/run_log.h"
#include "source/source.h"
#include "index/contact_sheet.h"
#include "index/embed_index.h"

namespace fs = std::filesystem;

namespace bt::index {

namespace {

constexpr uint64_t kMaxEmbeddingBytes = 64ull << 30;  // a 64 GiB index (16 M x 1024 floats) is the gate's cap

torch::Tensor read_embeddings(const fs::path& path) {
  std::vector<uint8_t> bytes;
  read_regular_file(path.string(), bytes, kMaxEmbeddingBytes);
  const media::NpyMatrix m = media::parse_npy_f32_matrix(bytes, path.string());
  torch::Tensor t = torch::empty({m.rows, m.cols}, torch::kFloat32);
  if (t.numel() > 0) std::memcpy(t.data_ptr<float>(), bytes.data() + m.data_offset, size_t(t.numel()) * 4);
  return t;
}

std::vector<nlohmann::json> read_lines(const fs::path& path) {
  const std::string text = read_small_file(path.string(), kMaxEmbeddingBytes);
  std::vector<nlohmann::json> rows;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    if (end > start) rows.push_back(parse_json_text(std::string_view(text).substr(start, end - start), path.string()));
    start = end + 1;
  }
  return rows;
}

// The query image as a one-row dataset: read and decoded by the same loader and eval transform as the index.
std::shared_ptr<const data::Dataset> image_file(const std::string& path) {
  if (!fs::is_regular_file(path)) fail("--query_image ", path, ": no such file");
  data::ParsedCaptions one;
  one.rows.push_back({fs::absolute(path).string(), "", 1, false, ""});
  return std::make_shared<data::CaptionsDataset>(std::move(one), path, "");
}

// The contact sheet of the top images: the index's data reopened as encode read it, each result's dataset row
// (contact_sheet.h checks what the folder says first).
void draw_contact_sheet(const std::string& out, const fs::path& dir, const nlohmann::json& index,
                        const std::vector<nlohmann::json>& images, const std::vector<int64_t>& top,
                        const std::vector<float>& scores) {
  const std::vector<size_t> rows = index_rows(images, top, (dir / "images.jsonl").string());
  write_contact_sheet(out, open_index_data(index, (dir / "index.json").string(), rows), rows, scores);
}

}  // namespace

int run_search(const SearchOptions& o) {
  if (o.query.empty() == o.query_image.empty()) fail("search: give exactly one of --query TEXT and --query_image PATH");
  if (o.top_k < 1) fail("--top_k must be >= 1");
  const fs::path dir(o.index);
  if (!fs::exists(dir / "index.json")) fail("--index ", o.index, ": no index.json in it (make one with bridgetune encode)");
  const nlohmann::json index = report::read_json_file(dir / "index.json");
  const std::string model_dir = !o.model_name_or_path.empty() ? o.model_name_or_path : index.value("model", std::string());
  const bool by_text = !o.query.empty();
  // Before anything is ranked or printed: a sheet that cannot be drawn or written is refused up front (issue 57).
  if (!o.contact_sheet.empty()) {
    if (!by_text)
      fail("--contact_sheet draws the top images of a text --query; --query_image ranks captions, which have no "
           "pictures to draw (drop --contact_sheet)");
    const fs::path folder = fs::path(o.contact_sheet).parent_path();
    std::error_code ec;
    if (!folder.empty() && !fs::is_directory(folder, ec))
      fail("--contact_sheet ", o.contact_sheet, ": the folder ", folder.string(), " does not exist (create it first)");
  }
  if (!by_text && !fs::exists(dir / "text_embeds.npy"))
    fail("--index ", o.index, ": it has no texts to rank for an image (the data had no captions)");
  const torch::Device device = model::parse_device(o.device);
  model::BridgeTowerForContrastiveLearning m = model::load_contrastive(model_dir, model::ModelBudget{false, 1, o.max_model_bytes});
  m->to(device);
  // One query: batch 1, no loader threads; captions cut as at encode time.
  const int max_len = index.contains("transform") ? index["transform"].value("max_seq_length", 128) : 128;
  const eval::EmbedOptions eo = eval::standalone_embed_options(
      m, 1, 0, std::min(max_len, model::max_text_tokens(m->config().text)), data::OnBad::kError, device, o.bf16);
  // The tokenizer encode used (index.json's, when it names one: encode --tokenizer_name), else the model's.
  const std::string tokenizer_dir = o.model_name_or_path.empty() ? index.value("tokenizer", std::string()) : "";
  torch::Tensor q = by_text ? eval::embed_text_list(m, eval::model_tokenizer(model_dir, tokenizer_dir, m->config().text),
                                                    {o.query}, eo)
                            : eval::embed_image_rows(m, image_file(o.query_image), {0}, eo);
  const torch::Tensor gallery = read_embeddings(dir / (by_text ? "image_embeds.npy" : "text_embeds.npy"));
  const std::vector<nlohmann::json> keys = read_lines(dir / (by_text ? "images.jsonl" : "texts.jsonl"));
  if (!torch::isfinite(gallery).all().item<bool>())
    fail("--index ", o.index, ": its ", by_text ? "image" : "text", " embeddings hold NaN/inf values (a damaged file, "
         "or written by a diverged model): encode it again with a finite model");
  if (int64_t(keys.size()) != gallery.size(0) || gallery.size(1) != q.size(1))
    fail("--index ", o.index, ": its embeddings (", gallery.size(0), " x ", gallery.size(1), ") do not fit its ",
         keys.size(), " keys or this model's ", q.size(1), " dimensions");
  const torch::Tensor scores = torch::matmul(gallery, q[0]);
  const int64_t k = std::min<int64_t>(o.top_k, scores.size(0));
  auto [values, indices] = scores.topk(k);
  std::vector<int64_t> top(indices.data_ptr<int64_t>(), indices.data_ptr<int64_t>() + k);
  std::vector<float> top_scores(values.data_ptr<float>(), values.data_ptr<float>() + k);
  const char* what = by_text ? "image" : "text";
  if (!o.json) std::printf("%-5s %-8s %s\n", "rank", "score", what);
  const std::string keys_file = (dir / (by_text ? "images.jsonl" : "texts.jsonl")).string();
  for (int64_t i = 0; i < k; ++i) {
    const nlohmann::json& line = keys[size_t(top[size_t(i)])];
    if (!line.is_object() || !line.contains(what) || !line[what].is_string())
      fail(keys_file, ":", top[size_t(i)] + 1, ": \"", what, "\" must be a string");
    // Keys come from a folder anyone may have shared: control bytes escaped (JSON: ASCII only, bad UTF-8 replaced).
    const std::string key = line[what].get<std::string>();
    if (o.json)
      std::printf("%s\n", nlohmann::json{{"rank", i + 1}, {what, key}, {"score", top_scores[size_t(i)]}}
                              .dump(-1, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
    else std::printf("%-5lld %-8.4f %s\n", (long long)(i + 1), double(top_scores[size_t(i)]), printable(key).c_str());
  }
  if (!o.contact_sheet.empty()) {
    if (!by_text) fail("--contact_sheet draws the top images: it needs a text --query");
    draw_contact_sheet(o.contact_sheet, dir, index, keys, top, top_scores);
    if (!o.json) std::printf("contact sheet: %s\n", printable(o.contact_sheet).c_str());
  }
  std::fflush(stdout);
  return int(k);
}

}  // namespace bt::index

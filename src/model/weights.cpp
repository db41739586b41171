// Parameter init (HF _init_weights), checkpoint I/O by HF names, parameter groups.
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <set>

#include "checkpoint/safetensors.h"
#include "checkpoint/torch_zip.h"
#include "common/error.h"
#include "common/terminal.h"
#include "model/bridgetower.h"
#include "model/lora.h"
#include "model/preprocessor.h"

namespace bt::model {

namespace {

torch::ScalarType to_torch(checkpoint::DType d) {
  switch (d) {
    case checkpoint::DType::F64: return torch::kDouble;
    case checkpoint::DType::F32: return torch::kFloat;
    case checkpoint::DType::F16: return torch::kHalf;
    case checkpoint::DType::BF16: return torch::kBFloat16;
    case checkpoint::DType::I64: return torch::kLong;
    case checkpoint::DType::I32: return torch::kInt;
    case checkpoint::DType::I16: return torch::kShort;
    case checkpoint::DType::I8: return torch::kChar;
    case checkpoint::DType::U8: return torch::kByte;
    case checkpoint::DType::BOOL: return torch::kBool;
  }
  return torch::kFloat;
}

checkpoint::DType from_torch(torch::ScalarType t) {
  switch (t) {
    case torch::kDouble: return checkpoint::DType::F64;
    case torch::kFloat: return checkpoint::DType::F32;
    case torch::kHalf: return checkpoint::DType::F16;
    case torch::kBFloat16: return checkpoint::DType::BF16;
    case torch::kLong: return checkpoint::DType::I64;
    case torch::kInt: return checkpoint::DType::I32;
    case torch::kShort: return checkpoint::DType::I16;
    case torch::kChar: return checkpoint::DType::I8;
    case torch::kByte: return checkpoint::DType::U8;
    case torch::kBool: return checkpoint::DType::BOOL;
    default: bt::fail("cannot store tensors of dtype ", c10::toString(t), " in safetensors");
  }
}

}  // namespace

void PretrainedModel::init_weights() {
  torch::NoGradGuard ng;
  const double f = cfg_.initializer_factor;
  auto params = named_parameters(true);
  if (params.size() && params[0].value().device().is_meta()) return;
  for (auto& kv : named_modules("", false)) {
    auto* m = kv.value().get();
    if (auto* l = dynamic_cast<LinearImpl*>(m)) {
      l->weight.normal_(0.0, 0.05 * f);
      if (l->bias.defined()) l->bias.zero_();
    } else if (auto* e = dynamic_cast<EmbeddingImpl*>(m)) {
      e->weight.normal_(0.0, 0.05 * f);
    } else if (auto* n = dynamic_cast<LayerNormImpl*>(m)) {
      n->weight.fill_(1.0);
      n->bias.zero_();
    } else if (auto* r = dynamic_cast<ResidualAttentionImpl*>(m)) {
      r->in_proj_bias.zero_();  // nn.MultiheadAttention's own reset
    } else if (auto* lt = dynamic_cast<LinkTowerImpl*>(m)) {
      if (lt->scaled_factor.defined()) lt->scaled_factor.fill_(1.0);
      if (lt->beta.defined()) lt->beta.fill_(0.5);
    }
  }
  for (auto& kv : named_modules("", false)) {
    auto* v = dynamic_cast<VisionTransformerImpl*>(kv.value().get());
    if (!v) continue;
    const double h = v->cfg.hidden_size, layers = v->cfg.num_hidden_layers;
    const double proj_std = std::pow(h, -0.5) * std::pow(2 * layers, -0.5), attn_std = std::pow(h, -0.5),
                 fc_std = std::pow(2 * h, -0.5);
    for (auto& b : v->resblocks) {
      b->in_proj_weight.normal_(0.0, attn_std * f);
      b->out_proj->weight.normal_(0.0, proj_std * f);
      b->c_fc->weight.normal_(0.0, fc_std * f);
      b->c_proj->weight.normal_(0.0, proj_std * f);
    }
    v->patch_weight.normal_(0.0, 0.05 * f);
    v->class_embedding.normal_(0.0, attn_std * f);
    v->position_embedding->weight.normal_(0.0, attn_std * f);
  }
  for (auto& kv : params) {
    if (kv.key() == "logit_scale") kv.value().fill_(cfg_.logit_scale_init_value);
    if (kv.key() == "mlm_score.bias") kv.value().zero_();
  }
}

int64_t PretrainedModel::count_parameters(bool trainable_only) const {
  int64_t n = 0;
  for (const auto& p : parameters(true))
    if (!trainable_only || p.requires_grad()) n += p.numel();
  return n;
}

namespace {

// One checkpoint tensor wherever it lives: a strided view (in elements) of a mapped storage.
struct Source {
  std::string file;
  checkpoint::DType dtype = checkpoint::DType::F32;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
  const uint8_t* base = nullptr;
  uint64_t nbytes = 0;
  const checkpoint::TorchCheckpoint* torch_file = nullptr;  // set for pytorch_model.bin storages
  size_t storage_id = 0;
};

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// The files of a checkpoint folder, in Hugging Face's order of preference (safetensors first), and the
// tensors they hold by name.
struct CheckpointFiles {
  std::vector<checkpoint::SafeTensors> st_files;
  std::deque<checkpoint::TorchCheckpoint> pt_files;  // a deque: Sources keep pointers into it
  std::map<std::string, Source> tensors;
};

void add_file(CheckpointFiles& c, const std::string& path) {
  if (path.size() >= 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0) {
    c.st_files.push_back(checkpoint::SafeTensors::open(path));
    for (const auto& t : c.st_files.back().tensors())
      c.tensors[t.name] = {path, t.dtype, t.shape, contiguous_strides(t.shape), 0, t.data, t.nbytes};
  } else {
    c.pt_files.push_back(checkpoint::TorchCheckpoint::open(path));
    for (const auto& t : c.pt_files.back().tensors())
      c.tensors[t.rec.name] = {path, t.rec.dtype, t.rec.shape, t.rec.strides, t.rec.storage_offset, t.storage,
                               t.storage_bytes, &c.pt_files.back(), t.storage_id};
  }
}

void open_checkpoint(CheckpointFiles& c, const std::string& dir) {
  namespace fs = std::filesystem;
  for (const char* stem : {"model.safetensors", "pytorch_model.bin"}) {
    const std::string single = dir + "/" + stem, index = single + ".index.json";
    if (fs::exists(single)) return add_file(c, single);
    if (fs::exists(index)) {
      std::set<std::string> shards;
      for (const auto& [name, shard] : checkpoint::read_safetensors_index(index)) shards.insert(shard);
      for (const auto& shard : shards) add_file(c, dir + "/" + shard);
      return;
    }
  }
  bt::fail(dir, ": no model.safetensors, pytorch_model.bin or their .index.json shards (fetch the checkpoint with "
           "`huggingface-cli download <org/name>`, or give a folder bridgetune wrote)");
}

// p <- s, converting the dtype, reading the mapping in place (no intermediate copy of the checkpoint).
void copy_into(Tensor& p, const Source& s) {
  const auto opts = torch::TensorOptions().dtype(to_torch(s.dtype));
  const size_t esz = checkpoint::dtype_size(s.dtype);
  const int64_t n = static_cast<int64_t>(s.nbytes / esz);
  Tensor storage;
  if (reinterpret_cast<uintptr_t>(s.base) % esz == 0) {
    storage = torch::from_blob(const_cast<uint8_t*>(s.base), {n}, opts);
  } else {  // safetensors data may be unaligned
    storage = torch::empty({n}, opts);
    if (n) std::memcpy(storage.data_ptr(), s.base, static_cast<size_t>(n) * esz);
  }
  p.copy_(storage.as_strided(s.shape, s.strides, s.offset));
}

// HF's embeddings hold a `position_ids` buffer (arange over the position table) beside each position embedding.
// transformers 4.30 keeps it in the state dict and names it "newly initialized" when a checkpoint lacks it; 4.31 on
// drop buffers from unexpected keys. Released checkpoints carry them, so bridgetune writes them too (I64 [1, N]) and
// reads them without a word.
const char* const kPositionTables[] = {".position_embedding.weight", ".position_embeddings.weight"};

std::string position_ids_name(const std::string& param) {
  for (const char* suffix : kPositionTables) {
    const size_t n = std::strlen(suffix);
    if (param.size() > n && param.compare(param.size() - n, n, suffix) == 0)
      return param.substr(0, param.size() - n) + ".position_ids";
  }
  return {};
}

void add_position_id_buffers(std::vector<std::pair<std::string, Tensor>>& ts) {
  std::vector<std::pair<std::string, Tensor>> ids;
  for (const auto& [name, t] : ts)
    if (std::string key = position_ids_name(name); !key.empty() && t.dim() == 2)
      ids.emplace_back(key, torch::arange(t.size(0), torch::kLong).unsqueeze(0));
  ts.insert(ts.end(), ids.begin(), ids.end());
}

bool is_position_ids_buffer(const std::string& key) {
  return key == "position_ids" || (key.size() > 13 && key.compare(key.size() - 13, 13, ".position_ids") == 0);
}

// The first few names (each cut at 200 bytes: they come from the file) and how many more.
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 12; ++i) out += (out.empty() ? "" : ", ") + names[i].substr(0, 200);
  if (names.size() > 12) out += bt::str(", ... (", names.size() - 12, " more)");
  return out;
}

}  // namespace

void PretrainedModel::load_weights(const std::string& dir, bool allow_missing_heads, bool check_only) {
  CheckpointFiles files;
  open_checkpoint(files, dir);
  auto& avail = files.tensors;
  // A plain BridgeTowerModel checkpoint has no "bridgetower." prefix.
  bool bare = !avail.empty() && std::none_of(avail.begin(), avail.end(), [](const auto& kv) {
    return kv.first.rfind("bridgetower.", 0) == 0;
  });
  // Storages of pytorch_model.bin go back to the kernel once their last tensor is copied (peak RSS).
  std::map<std::pair<const void*, size_t>, int> uses;
  for (const auto& [name, s] : avail)
    if (s.torch_file) ++uses[{s.torch_file, s.storage_id}];
  std::set<std::string> used;
  std::vector<std::string> missing_heads;
  torch::NoGradGuard ng;
  for (auto& kv : named_parameters(true)) {
    const std::string& name = kv.key();
    if (is_lora_parameter(name)) continue;  // the adapter's file, read below
    std::string key = name;
    if (bare && key.rfind("bridgetower.", 0) == 0) key = key.substr(12);
    auto it = avail.find(key);
    if (it == avail.end() && name == "mlm_score.decoder.weight")  // tied to the word embeddings in HF
      it = avail.find(bare ? "text_model.embeddings.word_embeddings.weight"
                           : "bridgetower.text_model.embeddings.word_embeddings.weight");
    Tensor& p = kv.value();
    if (it == avail.end()) {
      if (allow_missing_heads && name.rfind("bridgetower.", 0) != 0) {
        missing_heads.push_back(name);
        continue;
      }
      bt::fail(dir, ": checkpoint lacks tensor '", key, "' (model expects shape ", shape_str(p.sizes()), ")");
    }
    const Source& s = it->second;
    if (c10::IntArrayRef(s.shape) != p.sizes())
      bt::fail(s.file, ": tensor '", it->first, "' has shape ", shape_str(s.shape), ", the model expects ",
               shape_str(p.sizes()));
    if (!(s.dtype == checkpoint::DType::F32 || s.dtype == checkpoint::DType::F16 || s.dtype == checkpoint::DType::BF16 ||
          s.dtype == checkpoint::DType::F64))
      bt::fail(s.file, ": tensor '", it->first, "' has dtype ", checkpoint::dtype_name(s.dtype),
               ", expected a floating-point type");
    used.insert(it->first);
    if (check_only) continue;
    copy_into(p, s);
    if (s.torch_file && --uses[{s.torch_file, s.storage_id}] == 0) s.torch_file->release(s.storage_id);
    if (!torch::isfinite(p).all().item<bool>())  // a diverged run's, or bytes damaged where no manifest looks
      bt::fail(s.file, ": tensor '", it->first, "' holds NaN/inf values (a diverged or damaged checkpoint)");
  }
  // from_pretrained's rules: extra tensors (other heads) are skipped, missing heads keep the initialisation the
  // constructor gave them; both are named once. position_ids buffers are HF's, expected and not named.
  if (check_only) return;
  if (lora.active()) load_adapter_weights(*this, dir);  // a LoRA run's checkpoint: its adapters
  std::vector<std::string> skipped;
  for (const auto& kv : avail)
    if (!used.count(kv.first) && !is_position_ids_buffer(kv.first)) skipped.push_back(kv.first);
  if (!skipped.empty())
    std::fprintf(stderr, "%s: skipped %zu checkpoint tensors %s has no place for: %s\n", bt::printable(dir).c_str(),
                 skipped.size(), architecture().c_str(), bt::printable(joined(skipped)).c_str());  // names: file data
  if (!missing_heads.empty())
    std::fprintf(stderr, "%s: %zu head tensors are not in the checkpoint and keep their initialisation: %s\n",
                 bt::printable(dir).c_str(), missing_heads.size(), bt::printable(joined(missing_heads)).c_str());
}

void PretrainedModel::save_pretrained(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) bt::fail(dir, ": cannot create the output directory (", ec.message(), ")");
  std::vector<std::pair<std::string, Tensor>> ts;
  for (const auto& kv : named_parameters(true))
    if (!is_lora_parameter(kv.key())) ts.emplace_back(kv.key(), kv.value().detach().to(torch::kFloat));
  add_position_id_buffers(ts);
  // No checkpoint or final model is ever written with NaN/inf weights (a diverged run's would be resumed, published
  // and scored as if it were a model).
  for (const auto& [name, t] : ts)
    if (!torch::isfinite(t).all().item<bool>())
      bt::fail("refusing to write ", dir, "/model.safetensors: ", name, " holds NaN/inf values (the weights diverged)");
  save_tensors(dir + "/model.safetensors", ts);
  BridgeTowerConfig c = cfg_;
  c.extra["architectures"] = {architecture()};
  c.extra["torch_dtype"] = "float32";
  save_config(c, dir + "/config.json");
  // A complete HF folder, with the normalisation the model was trained with.
  write_preprocessor_config(dir + "/preprocessor_config.json", cfg_.vision.image_size, cfg_.image);
  if (lora.active()) save_adapter(*this, lora, dir);
}

void check_checkpoint_fits(const BridgeTowerConfig& c, const std::string& dir, bool allow_missing_heads) {
  BridgeTowerForContrastiveLearning(c, torch::TensorOptions().device(torch::kMeta))
      ->load_weights(dir, allow_missing_heads, /*check_only=*/true);
}

BridgeTowerForContrastiveLearning load_contrastive(const std::string& dir, const ModelBudget& budget,
                                                   bool allow_missing_heads) {
  const BridgeTowerConfig c = load_pretrained_config(dir);
  // A LoRA run's folder: its adapters checked (config, names, memory with them, the file's shapes) before any
  // allocation.
  if (has_adapter(dir)) check_adapter_fits(c, dir, budget);
  else check_model_memory(c, budget);
  check_checkpoint_fits(c, dir, allow_missing_heads);
  BridgeTowerForContrastiveLearning m(c);
  m->load_weights(dir, allow_missing_heads);
  if (has_adapter(dir)) {  // folded into the weights for inference
    apply_adapter(*m, dir);
    merge_lora(*m);
  }
  return m;
}

ParamGroups adamw_param_groups(torch::nn::Module& model) {
  std::set<const void*> norm_weights;
  for (auto& kv : model.named_modules("", false))
    if (auto* n = dynamic_cast<LayerNormImpl*>(kv.value().get())) norm_weights.insert(n->weight.unsafeGetTensorImpl());
  ParamGroups g;
  for (auto& kv : model.named_parameters(true)) {
    if (!kv.value().requires_grad()) continue;
    const std::string& n = kv.key();
    bool is_bias = n.size() >= 4 && n.compare(n.size() - 4, 4, "bias") == 0;
    if (is_bias || norm_weights.count(kv.value().unsafeGetTensorImpl())) {
      g.no_decay.push_back(kv.value());
      g.no_decay_names.push_back(n);
    } else {
      g.decay.push_back(kv.value());
      g.decay_names.push_back(n);
    }
  }
  return g;
}

int freeze_parameters(torch::nn::Module& model, const std::string& prefix) {
  int n = 0;
  for (auto& kv : model.named_parameters(true))
    if (kv.key().rfind(prefix, 0) == 0) {
      kv.value().set_requires_grad(false);
      ++n;
    }
  return n;
}

void copy_from_view(Tensor& p, const checkpoint::TensorView& t) {
  copy_into(p, {std::string(), t.dtype, t.shape, contiguous_strides(t.shape), 0, t.data, t.nbytes});
}

std::map<std::string, Tensor> load_tensors(const std::string& path) {
  CheckpointFiles files;
  add_file(files, path);
  std::map<std::string, Tensor> out;
  for (const auto& [name, src] : files.tensors) {
    Tensor t = torch::empty(src.shape, torch::TensorOptions().dtype(to_torch(src.dtype)));
    copy_into(t, src);
    out[name] = t;
  }
  return out;
}

void save_tensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  std::vector<Tensor> keep;
  std::vector<checkpoint::TensorOut> outs;
  for (const auto& [name, t] : tensors) {
    Tensor c = t.detach().to(torch::kCPU).contiguous();
    keep.push_back(c);
    outs.push_back({name, from_torch(c.scalar_type()), c.sizes().vec(), c.data_ptr(), c.nbytes()});
  }
  checkpoint::write_safetensors(path, outs);
}

}  // namespace bt::model

// ---------------- torch-free entry points (api.h) ----------------
namespace bt::model {

int64_t parameter_count(const BridgeTowerConfig& c, const std::string& head) {
  auto meta = torch::TensorOptions().device(torch::kMeta);
  if (head == "contrastive") return BridgeTowerForContrastiveLearning(c, meta)->count_parameters();
  if (head == "itm") return BridgeTowerForImageAndTextRetrieval(c, meta)->count_parameters();
  if (head == "mlm") return BridgeTowerForMaskedLM(c, meta)->count_parameters();
  bt::fail("unknown head '", head, "' (use contrastive, itm or mlm)");
}

std::string describe(const BridgeTowerConfig& c) {
  return bt::str("vision: ", c.vision.num_hidden_layers, " layers x ", c.vision.hidden_size, " (", c.vision.hidden_size / 64,
                 " heads), image ", c.vision.image_size, ", patch ", c.vision.patch_size, "\n",
                 "text:   ", c.text.num_hidden_layers, " layers x ", c.text.hidden_size, " (", c.text.num_attention_heads,
                 " heads, ffn ", c.text.intermediate_size, "), vocab ", c.text.vocab_size, ", max positions ",
                 c.text.max_position_embeddings, "\n", "cross:  ", c.num_hidden_layers, " layers x ", c.hidden_size,
                 ", link tower ", c.link_tower_type, ", contrastive dim ", c.contrastive_hidden_size, "\n");
}

void forward_file(const std::string& model_dir, const std::string& batch_path, const std::string& out_path,
                  uint64_t max_model_bytes) {
  auto model = load_contrastive(model_dir, ModelBudget{false, 1, max_model_bytes});
  model->eval();
  auto batch = load_tensors(batch_path);
  auto get = [&](const char* name, bool integer) {
    auto it = batch.find(name);
    if (it == batch.end()) bt::fail(batch_path, ": batch lacks tensor '", name, "'");
    bool is_int = !torch::isFloatingType(it->second.scalar_type()) && it->second.scalar_type() != torch::kBool;
    if (integer != is_int)
      bt::fail(batch_path, ": tensor '", name, "' must be ", integer ? "an integer type (I64)" : "floating point (F32)");
    return integer ? it->second.to(torch::kLong) : it->second.to(torch::kFloat);
  };
  Tensor px = get("pixel_values", false), ids = get("input_ids", true), mask = get("attention_mask", true);
  torch::NoGradGuard ng;
  ContrastiveOutput o;
  try {
    o = model->forward(px, ids, mask, true);
  } catch (const c10::Error& e) {
    bt::fail(batch_path, ": forward failed: ", e.what_without_backtrace());
  }
  save_tensors(out_path, {{"text_embeds", o.text_embeds}, {"image_embeds", o.image_embeds},
                          {"cross_embeds", o.cross_embeds}, {"logits", o.logits}, {"loss", o.loss}});
}

}  // namespace bt::model

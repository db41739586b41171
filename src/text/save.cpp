// Tokenizer::save: the files transformers' RobertaTokenizer(Fast).save_pretrained writes, so that a checkpoint
// written by bridgetune loads in Python with AutoTokenizer and back here with from_dir.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "text/tokenizer.h"
#include "text/tokenizer_impl.h"

namespace bt::text {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path.string(), ": cannot open for writing");
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) fail(path.string(), ": write failed (disk full?)");
}

std::string dump(const ordered_json& j) { return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n"; }

// tokenizer.json's post_processor: RobertaProcessing for the <s> ... </s> framing, TemplateProcessing for any
// other, null for none.
ordered_json post_processor(const Tokenizer& tok, const TokenizerImpl& t) {
  ordered_json post = nullptr;
  auto special_pair = [&](int32_t id) { return ordered_json::array({tok.id_to_token(id), id}); };
  if (t.prefix.size() == 1 && t.suffix.size() == 1) {
    post = {{"type", "RobertaProcessing"}, {"sep", special_pair(t.suffix[0])}, {"cls", special_pair(t.prefix[0])},
            {"trim_offsets", true}, {"add_prefix_space", t.add_prefix_space}};
  } else if (!t.prefix.empty() || !t.suffix.empty()) {
    ordered_json single = ordered_json::array(), specials = ordered_json::object();
    auto add = [&](int32_t id) {
      std::string name = tok.id_to_token(id);
      single.push_back({{"SpecialToken", {{"id", name}, {"type_id", 0}}}});
      specials[name] = {{"id", name}, {"ids", {id}}, {"tokens", {name}}};
    };
    for (int32_t id : t.prefix) add(id);
    single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
    for (int32_t id : t.suffix) add(id);
    post = {{"type", "TemplateProcessing"}, {"single", single}, {"pair", single}, {"special_tokens", specials}};
  }
  return post;
}

}  // namespace

void Tokenizer::save(const std::string& dir) const {
  const TokenizerImpl& t = *impl_;
  const BpeModel& m = *t.model;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) fail(dir, ": cannot create the tokenizer output directory");
  fs::path d(dir);

  ordered_json vocab = ordered_json::object();
  for (size_t id = 0; id < m.id_limit(); ++id)
    if (m.has_id(int32_t(id))) vocab[m.id_to_token(int32_t(id))] = id;
  write_file(d / "vocab.json", dump(vocab));

  std::string merges = "#version: 0.2\n";
  ordered_json merge_list = ordered_json::array();
  for (auto [a, b] : m.merges()) {
    std::string line = m.id_to_token(a) + " " + m.id_to_token(b);
    merges += line + "\n";
    merge_list.push_back(line);
  }
  write_file(d / "merges.txt", merges);

  // Added tokens that are not in the model vocabulary (none for RoBERTa checkpoints).
  ordered_json extra = ordered_json::object();
  for (auto& a : t.added)
    if (!m.has_id(a.id)) extra[a.content] = a.id;
  if (!extra.empty()) write_file(d / "added_tokens.json", dump(extra));

  auto token = [&](int32_t id, bool lstrip = false) -> ordered_json {
    std::string s = id_to_token(id);
    if (!lstrip) return s;
    return {{"content", s}, {"lstrip", true}, {"normalized", false}, {"rstrip", false}, {"single_word", false}};
  };
  ordered_json map = ordered_json::object();
  if (t.bos >= 0) map["bos_token"] = token(t.bos), map["cls_token"] = token(t.bos);
  if (t.eos >= 0) map["eos_token"] = token(t.eos), map["sep_token"] = token(t.eos);
  if (t.mask >= 0) map["mask_token"] = token(t.mask, true);
  if (t.pad >= 0) map["pad_token"] = token(t.pad);
  if (t.unk >= 0) map["unk_token"] = token(t.unk);
  write_file(d / "special_tokens_map.json", dump(map));

  // In tokenizer_config.json plain strings: RobertaTokenizer wraps <mask> in AddedToken(lstrip=True) itself, and
  // a bare dict there is not read back as an AddedToken by every transformers version.
  ordered_json config = map;
  if (t.mask >= 0) config["mask_token"] = id_to_token(t.mask);
  config["add_prefix_space"] = t.add_prefix_space;
  config["errors"] = "replace";
  config["model_max_length"] = 512;
  config["tokenizer_class"] = "RobertaTokenizer";
  config["trim_offsets"] = true;
  write_file(d / "tokenizer_config.json", dump(config));

  // tokenizer.json: the fast tokenizer's single file. from_dir prefers it, so it must describe this tokenizer
  // exactly (framing included).
  ordered_json added = ordered_json::array();
  std::vector<const AddedToken*> by_id;
  for (auto& a : t.added) by_id.push_back(&a);
  std::sort(by_id.begin(), by_id.end(), [](auto* a, auto* b) { return a->id < b->id; });
  for (auto* a : by_id)
    added.push_back({{"id", a->id}, {"content", a->content}, {"single_word", false}, {"lstrip", a->lstrip},
                     {"rstrip", a->rstrip}, {"normalized", false}, {"special", a->special}});
  const ordered_json post = post_processor(*this, t);
  ordered_json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", t.add_prefix_space}, {"trim_offsets", true},
                             {"use_regex", true}};
  ordered_json model = {{"type", "BPE"}, {"dropout", nullptr},
                        {"unk_token", m.unk_id() >= 0 ? ordered_json(m.id_to_token(m.unk_id())) : ordered_json()},
                        {"continuing_subword_prefix", ""}, {"end_of_word_suffix", ""}, {"fuse_unk", false},
                        {"byte_fallback", false}, {"vocab", vocab}, {"merges", merge_list}};
  ordered_json tj = {{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}, {"added_tokens", added},
                     {"normalizer", nullptr}, {"pre_tokenizer", byte_level}, {"post_processor", post},
                     {"decoder", byte_level}, {"model", model}};
  write_file(d / "tokenizer.json", dump(tj));
}

}  // namespace bt::text

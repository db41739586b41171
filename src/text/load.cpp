// Loaders: vocab.json + merges.txt, tokenizer.json, a directory holding either, and in-memory tables. Every
// malformed input ends in one bt::Error naming the file and what is wrong.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"
#include "text/tokenizer.h"
#include "text/tokenizer_impl.h"
#include "text/utf8.h"

namespace bt::text {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Vocab = std::vector<std::pair<std::string, int64_t>>;
using Merges = std::vector<std::pair<std::string, std::string>>;

std::string read_all(const std::string& path) { return bt::read_small_file(path); }

json parse_json(const std::string& path, const std::string& bytes) {
  return bt::parse_json_text(bytes, path);  // depth-limited: common/json.h
}

// Every id is range-checked here, before any narrowing: 2^32 + 2 must not become 2 and pass the vocabulary check.
int64_t as_id(const json& v, const std::string& path, const std::string& what) {
  if (!v.is_number_integer()) fail(path, ": ", what, " must be an integer id, got ", v.type_name());
  if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(INT32_MAX) : (v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX))
    fail(path, ": ", what, " is out of range (ids are 0..", INT32_MAX, ")");
  return v.get<int64_t>();
}

const std::string& as_str(const json& v, const std::string& path, const std::string& what) {
  if (!v.is_string()) fail(path, ": ", what, " must be a string, got ", v.type_name());
  return v.get_ref<const std::string&>();
}

Vocab parse_vocab(const json& v, const std::string& path, const std::string& where) {
  if (!v.is_object()) fail(path, ": ", where, " must be a JSON object {token: id}, got ", v.type_name());
  Vocab vocab;
  vocab.reserve(v.size());
  for (auto it = v.begin(); it != v.end(); ++it)
    vocab.emplace_back(it.key(), as_id(it.value(), path, "the id of token " + quote(it.key())));
  return vocab;
}

std::pair<std::string, std::string> split_merge(std::string_view line, const std::string& path, size_t lineno) {
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos || sp == 0 || sp + 1 >= line.size() || line.find(' ', sp + 1) != line.npos)
    fail(path, ": merge ", lineno, " ", quote(line), " is not two tokens separated by one space");
  return {std::string(line.substr(0, sp)), std::string(line.substr(sp + 1))};
}

Merges parse_merges_txt(const std::string& path) {
  std::string text = read_all(path);
  Merges merges;
  size_t pos = 0, lineno = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || (lineno == 1 && line.starts_with("#version"))) continue;
    merges.push_back(split_merge(line, path + " line " + std::to_string(lineno), merges.size() + 1));
  }
  return merges;
}

bool read_add_prefix_space(const fs::path& config) {
  std::error_code ec;
  if (!fs::exists(config, ec)) return false;
  json j = parse_json(config.string(), read_all(config.string()));
  if (!j.is_object() || !j.contains("add_prefix_space")) return false;
  if (!j["add_prefix_space"].is_boolean()) fail(config.string(), ": add_prefix_space must be true or false");
  return j["add_prefix_space"].get<bool>();
}

Tokenizer build(Vocab vocab, Merges merges, const std::string& unk, bool add_prefix_space,
                const std::string& vocab_src, const std::string& merges_src) {
  auto impl = std::make_shared<TokenizerImpl>();
  impl->model = std::make_unique<BpeModel>(vocab, merges, unk, vocab_src, merges_src);
  impl->add_prefix_space = add_prefix_space;
  impl->finish(true);
  return Tokenizer(std::move(impl));
}

// Framing from a post_processor node: RobertaProcessing, TemplateProcessing, ByteLevel (none), or a Sequence.
void parse_post_processor(const json& p, TokenizerImpl& t, const std::string& path) {
  if (p.is_null()) return;
  if (!p.is_object() || !p.contains("type")) fail(path, ": post_processor must be an object with a \"type\"");
  const std::string& type = as_str(p["type"], path, "post_processor.type");
  auto special = [&](const json& pair, const char* name) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string())
      fail(path, ": post_processor.", name, " must be [token, id]");
    return int32_t(as_id(pair[1], path, std::string("post_processor.") + name + " id"));
  };
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    t.prefix = {special(p.value("cls", json()), "cls")};
    t.suffix = {special(p.value("sep", json()), "sep")};
  } else if (type == "TemplateProcessing") {
    const json& single = p.value("single", json());
    if (!single.is_array()) fail(path, ": post_processor.single must be a list");
    const json& tokens = p.value("special_tokens", json::object());
    bool seen_a = false;
    for (const json& piece : single) {
      if (piece.contains("Sequence")) {
        seen_a = true;
      } else if (piece.contains("SpecialToken") && piece["SpecialToken"].contains("id")) {
        const std::string& name = as_str(piece["SpecialToken"]["id"], path, "post_processor special token");
        if (!tokens.contains(name) || !tokens[name].contains("ids") || !tokens[name]["ids"].is_array())
          fail(path, ": post_processor.special_tokens lacks ", quote(name));
        for (const json& id : tokens[name]["ids"])
          (seen_a ? t.suffix : t.prefix).push_back(int32_t(as_id(id, path, "post_processor special token id")));
      } else {
        fail(path, ": post_processor.single holds an entry that is neither Sequence nor SpecialToken");
      }
    }
  } else if (type == "Sequence") {
    const json& list = p.value("processors", json());
    if (!list.is_array()) fail(path, ": post_processor.processors must be a list");
    for (const json& q : list) parse_post_processor(q, t, path);
  } else if (type != "ByteLevel") {
    fail(path, ": post_processor type ", quote(type), " is not supported (RobertaProcessing, TemplateProcessing, ",
         "ByteLevel)");
  }
}

bool parse_pre_tokenizer(const json& p, const std::string& path) {
  if (p.is_null()) fail(path, ": pre_tokenizer is null; only ByteLevel (GPT-2/RoBERTa) tokenizers are supported");
  if (!p.is_object() || !p.contains("type")) fail(path, ": pre_tokenizer must be an object with a \"type\"");
  const std::string& type = as_str(p["type"], path, "pre_tokenizer.type");
  if (type == "Sequence") {
    const json& list = p.value("pretokenizers", json());
    if (!list.is_array() || list.size() != 1) fail(path, ": only a Sequence holding one ByteLevel pre_tokenizer is supported");
    return parse_pre_tokenizer(list[0], path);
  }
  if (type != "ByteLevel") fail(path, ": pre_tokenizer type ", quote(type), " is not supported (only ByteLevel)");
  if (p.contains("use_regex") && p["use_regex"].is_boolean() && !p["use_regex"].get<bool>())
    fail(path, ": pre_tokenizer ByteLevel with use_regex false is not supported");
  const json& aps = p.value("add_prefix_space", json(false));
  if (!aps.is_boolean()) fail(path, ": pre_tokenizer.add_prefix_space must be true or false");
  return aps.get<bool>();
}

}  // namespace

Tokenizer Tokenizer::from_files(const std::string& vocab_json, const std::string& merges_txt, bool add_prefix_space) {
  json v = parse_json(vocab_json, read_all(vocab_json));
  return build(parse_vocab(v, vocab_json, "the file"), parse_merges_txt(merges_txt), "<unk>", add_prefix_space,
               vocab_json, merges_txt);
}

Tokenizer Tokenizer::from_vocab_merges(const std::vector<std::string>& vocab,
                                       const std::vector<std::pair<std::string, std::string>>& merges,
                                       bool add_prefix_space) {
  Vocab v;
  v.reserve(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) v.emplace_back(vocab[i], int64_t(i));
  return build(std::move(v), merges, "<unk>", add_prefix_space, "in-memory vocab", "in-memory merges");
}

Tokenizer Tokenizer::from_tokenizer_json(const std::string& path) {
  json j = parse_json(path, read_all(path));
  if (!j.is_object()) fail(path, ": expected a JSON object at the top level");
  static const json kNull;
  auto mit = j.find("model");  // find, not value(): no copy of a 50k-entry vocabulary
  const json& model = mit != j.end() ? *mit : kNull;
  if (!model.is_object()) fail(path, ": missing \"model\" object");
  if (model.contains("type") && as_str(model["type"], path, "model.type") != "BPE")
    fail(path, ": model.type is ", quote(model["type"].get<std::string>()), "; only BPE is supported");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && !model[key].is_null() && !(model[key].is_string() && model[key].get<std::string>().empty()))
      fail(path, ": model.", key, " is set; byte-level BPE does not use it and it is not supported");
  if (model.value("byte_fallback", false) == true) fail(path, ": model.byte_fallback is not supported");
  if (!model.contains("vocab")) fail(path, ": model.vocab is missing");
  Vocab vocab = parse_vocab(model["vocab"], path, "model.vocab");
  auto mm = model.find("merges");
  const json& m = mm != model.end() ? *mm : kNull;
  if (!m.is_array()) fail(path, ": model.merges must be a list");
  Merges merges;
  merges.reserve(m.size());
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i].is_string()) {
      merges.push_back(split_merge(m[i].get_ref<const std::string&>(), path, i + 1));
    } else if (m[i].is_array() && m[i].size() == 2 && m[i][0].is_string() && m[i][1].is_string()) {
      merges.emplace_back(m[i][0].get<std::string>(), m[i][1].get<std::string>());
    } else {
      fail(path, ": model.merges[", i, "] must be \"a b\" or [\"a\", \"b\"]");
    }
  }
  std::string unk;
  if (model.contains("unk_token") && !model["unk_token"].is_null()) unk = as_str(model["unk_token"], path, "model.unk_token");
  const json& norm = j.value("normalizer", json());
  if (!norm.is_null()) fail(path, ": a normalizer is set; RoBERTa tokenizers have none and it is not supported");

  auto impl = std::make_shared<TokenizerImpl>();
  impl->model = std::make_unique<BpeModel>(vocab, merges, unk, path + " (model.vocab)", path + " (model.merges)");
  impl->add_prefix_space = parse_pre_tokenizer(j.value("pre_tokenizer", json()), path);
  const json& added = j.value("added_tokens", json::array());
  if (!added.is_array()) fail(path, ": added_tokens must be a list");
  for (size_t i = 0; i < added.size(); ++i) {
    const json& a = added[i];
    std::string where = "added_tokens[" + std::to_string(i) + "]";
    if (!a.is_object()) fail(path, ": ", where, " must be an object");
    AddedToken t;
    t.content = as_str(a.value("content", json()), path, where + ".content");
    int64_t id = as_id(a.value("id", json()), path, where + ".id");
    if (id < 0 || id >= int64_t(impl->model->id_limit()) + (1 << 16))
      fail(path, ": ", where, ".id ", id, " is out of range (the model has ", impl->model->id_limit(), " ids)");
    t.id = int32_t(id);
    t.special = a.value("special", false) == true;
    t.lstrip = a.value("lstrip", false) == true;
    t.rstrip = a.value("rstrip", false) == true;
    if (t.content.empty()) fail(path, ": ", where, ".content is empty");
    impl->added.push_back(std::move(t));
  }
  parse_post_processor(j.value("post_processor", json()), *impl, path);
  impl->finish(false);
  for (int32_t id : impl->prefix)
    if (size_t(id) >= impl->special.size()) fail(path, ": post_processor uses id ", id, ", which is not in the vocabulary");
  for (int32_t id : impl->suffix)
    if (size_t(id) >= impl->special.size()) fail(path, ": post_processor uses id ", id, ", which is not in the vocabulary");
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::from_dir(const std::string& dir) {
  std::error_code ec;
  fs::path d(dir);
  if (!fs::is_directory(d, ec)) fail(dir, ": not a directory (expected tokenizer.json or vocab.json + merges.txt)");
  if (fs::exists(d / "tokenizer.json", ec)) return from_tokenizer_json((d / "tokenizer.json").string());
  if (fs::exists(d / "vocab.json", ec) && fs::exists(d / "merges.txt", ec))
    return from_files((d / "vocab.json").string(), (d / "merges.txt").string(),
                      read_add_prefix_space(d / "tokenizer_config.json"));
  fail(dir, ": holds neither tokenizer.json nor vocab.json + merges.txt");
}

}  // namespace bt::text

// bridgetune tokenize: one text per stdin line -> one JSON array of token ids per stdout line, with the ids the
// Hugging Face tokenizer of the same files gives (RobertaTokenizerFast). A trailing "\r" (CRLF input) is not
// part of the text.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/hub_flags.h"
#include "common/error.h"
#include "text/tokenizer.h"

namespace bt::cli {
namespace {

struct TokenizeArgs {
  std::string dir, vocab, merges;
  HubFlags hub;  // --tokenizer_dir may be a hub id (org/name) in the local HF cache, as everywhere else
  bool no_special = false;
  int max_seq_length = 128;  // the reference example's default
};

void run(const TokenizeArgs& a) {
  if (a.dir.empty() == (a.vocab.empty() || a.merges.empty()))
    fail("tokenize: give either --tokenizer_dir DIR or both --vocab and --merges");
  if (!a.dir.empty() && (!a.vocab.empty() || !a.merges.empty()))
    fail("tokenize: --tokenizer_dir excludes --vocab/--merges");
  text::Tokenizer tok = a.dir.empty() ? text::Tokenizer::from_files(a.vocab, a.merges)
                                      : text::Tokenizer::from_dir(a.hub.resolve(a.dir, "--tokenizer_dir"));
  std::string line, out;
  std::ios::sync_with_stdio(false);
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto ids = tok.encode(line, !a.no_special, a.max_seq_length);
    out = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out += ", ";
      out += std::to_string(ids[i]);
    }
    out += "]\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (std::fflush(stdout) != 0) fail("tokenize: cannot write to stdout");
}

bt::cli::Registrar reg("tokenize", "Tokenize stdin lines (one text each) into JSON arrays of token ids", 50,
                       [](CLI::App& app) {
  auto a = std::make_shared<TokenizeArgs>();
  app.add_option("--tokenizer_dir", a->dir,
                 "Directory with tokenizer.json, or vocab.json + merges.txt; or a hub id (org/name) in the local HF cache");
  add_hub_flags(app, &a->hub.revision, &a->hub.cache_dir);
  app.add_option("--vocab", a->vocab, "vocab.json (with --merges)");
  app.add_option("--merges", a->merges, "merges.txt (with --vocab)");
  app.add_flag("--no_special_tokens", a->no_special, "Do not add <s> ... </s>");
  app.add_option("--max_seq_length", a->max_seq_length, "Truncate to this many ids, </s> kept (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.callback([a] { run(*a); });
});

}  // namespace
}  // namespace bt::cli

// bridgetune tokenize: one text per stdin line -> one JSON array of token ids per stdout line, with the ids the
// Hugging Face tokenizer of the same files gives (RobertaTokenizerFast). A trailing "\r" (CRLF input) is not
// part of the text.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/flag_table.h"
#include "cli/hub_flags.h"
#include "common/defaults.h"
#include "common/error.h"
#include "text/tokenizer.h"

namespace bt::cli {
namespace {

struct TokenizeArgs {
  std::string dir, vocab, merges;
  HubFlags hub;  // --tokenizer_name may be a hub id (org/name) in the local HF cache, as everywhere else
  bool no_special = false;
  int max_seq_length = defaults::kMaxSeqLength;
};

void run(const TokenizeArgs& a) {
  if (a.dir.empty() == (a.vocab.empty() || a.merges.empty()))
    fail("tokenize: give either --tokenizer_name DIR or both --vocab and --merges");
  if (!a.dir.empty() && (!a.vocab.empty() || !a.merges.empty()))
    fail("tokenize: --tokenizer_name excludes --vocab/--merges");
  text::Tokenizer tok = a.dir.empty() ? text::Tokenizer::from_files(a.vocab, a.merges)
                                      : text::Tokenizer::from_dir(a.hub.resolve(a.dir, "--tokenizer_name"));
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
  add_flag(app, flags::kTokenizerName, a->dir, ",--tokenizer_dir");  // --tokenizer_dir: its name before train's
  add_hub_flags(app, &a->hub.revision, &a->hub.cache_dir);
  app.add_option("--vocab", a->vocab, "vocab.json (with --merges)");
  app.add_option("--merges", a->merges, "merges.txt (with --vocab)");
  app.add_flag("--no_special_tokens", a->no_special, "Do not add <s> ... </s>");
  add_flag(app, flags::kMaxSeqLength, a->max_seq_length)->check(CLI::NonNegativeNumber);  // here 0: no limit
  app.callback([a] { run(*a); });
});

}  // namespace
}  // namespace bt::cli

// libFuzzer target for cli/args.h's args files: whatever the bytes, JSON or YAML, the parser returns flags or
// throws bt::Error (one line naming the file), never crashes; every group it returns starts with a `--` flag.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cli/args.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (bool yaml : {false, true}) {
    try {
      const auto flags = bt::cli::args_text_flags(text, yaml, "args");
      if (!flags.empty() && flags[0].rfind("--", 0) != 0) std::abort();
    } catch (const bt::Error& e) {
      if (std::string(e.what()).rfind("args", 0) != 0) std::abort();  // every message names the file
    }
  }
  return 0;
}

// `bridgetune flags`: the shared flags' table (cli/flag_table.h) as Markdown, or as JSON for tools and the test that
// checks every command's --help against it.
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/flag_table.h"

namespace {

bt::cli::Registrar reg("flags", "The flags several commands share: name, default, help, commands (Markdown or --json)",
                       70, [](CLI::App& app) {
                         auto json = std::make_shared<bool>(false);
                         bt::cli::add_switch(app, bt::cli::flags::kJson, *json);
                         app.callback([json] { std::fputs(bt::cli::flag_table_text(*json).c_str(), stdout); });
                       });

}  // namespace

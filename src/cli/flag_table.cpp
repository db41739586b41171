#include "cli/flag_table.h"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include <cstdlib>

namespace bt::cli {

namespace {

// The groups in --help's order (flag_table.h).
const std::vector<std::string> kGroupOrder = {group::kEssentials, group::kModelData, group::kOptimisation,
                                              group::kFineTuning, group::kRuntime,   group::kCheckpoints,
                                              group::kSelection,  group::kHfRecipe,  group::kGaudi,
                                              group::kHfCompat};

int group_rank(const std::string& g) {
  const auto it = std::find(kGroupOrder.begin(), kGroupOrder.end(), g);
  return it == kGroupOrder.end() ? -1 : static_cast<int>(it - kGroupOrder.begin());
}

// CLI11 2.1's Formatter::make_help with the groups ordered by group_rank (its make_groups is not virtual).
class GroupedFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return CLI::Formatter::make_help(app, name, mode);
    std::stringstream out;
    if (app->get_name().empty() && app->get_parent() != nullptr && app->get_group() != "Subcommands")
      out << app->get_group() << ':';
    out << make_description(app) << make_usage(app, name) << make_positionals(app) << ordered_groups(app)
        << make_subcommands(app, mode) << '\n'
        << make_footer(app);
    return out.str();
  }

 private:
  std::string ordered_groups(const CLI::App* app) const {
    std::vector<std::string> groups = app->get_groups();
    std::stable_sort(groups.begin(), groups.end(),
                     [](const std::string& a, const std::string& b) { return group_rank(a) < group_rank(b); });
    std::string out;
    for (const std::string& g : groups) {
      if (g.empty()) continue;  // hidden
      const auto opts = app->get_options([&g](const CLI::Option* o) { return o->get_group() == g && o->nonpositional(); });
      if (!opts.empty()) out += (out.empty() ? "" : "\n") + make_group(g, false, opts);
    }
    return out;
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> grouped_formatter() { return std::make_shared<GroupedFormatter>(); }

const std::string& FlagDef::default_for(const std::string& command) const {
  for (const CommandVariant& v : variants)
    if (v.command == command && v.default_text) return *v.default_text;
  return default_text;
}

const std::string& FlagDef::help_for(const std::string& command) const {
  for (const CommandVariant& v : variants)
    if (v.command == command && !v.help.empty()) return v.help;
  return help;
}

std::string flag_name(const FlagDef& def) { return def.names.substr(0, def.names.find(',')); }

// CLI11 reads the variable after the command line, for an option the command line left unset (flag > env > default).
CLI::Option* apply_def(CLI::Option* opt, const FlagDef& def) {
  opt->group(def.group);
  if (!def.env.empty()) opt->envname(def.env);
  return opt;
}

bool from_environment(const CLI::Option& opt) {
  if (opt.get_envname().empty() || opt.count() != 1) return false;
  const char* v = std::getenv(opt.get_envname().c_str());
  return v != nullptr && *v != '\0' && opt.results().front() == v;
}

CLI::Option* add_switch(CLI::App& app, const FlagDef& def, bool& target) {
  return apply_def(app.add_flag(def.names, target, def.help_for(app.get_name())), def);
}

namespace {
std::string escape_pipes(const std::string& s) {  // "tiny|small" inside a Markdown table cell
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}
}  // namespace

std::string flag_table_text(bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const FlagDef* d : flag_table()) {
      nlohmann::json variants = nlohmann::json::array();
      for (const CommandVariant& v : d->variants)
        variants.push_back({{"command", v.command}, {"default", d->default_for(v.command)}, {"help", d->help_for(v.command)}});
      out.push_back({{"names", d->names}, {"default", d->default_text}, {"help", d->help}, {"group", d->group},
                     {"commands", d->commands}, {"env", d->env}, {"variants", variants}});
    }
    return out.dump(1) + "\n";
  }
  std::string s;
  std::vector<std::string> order = {group::kOwn};  // a command's own flags first, as --help lists them
  order.insert(order.end(), kGroupOrder.begin(), kGroupOrder.end());
  for (const std::string& g : order) {
    std::string rows;
    for (const FlagDef* d : flag_table()) {
      if (d->group != g) continue;
      std::string cmds, dflt = d->default_text.empty() ? "" : "`" + d->default_text + "`", help = escape_pipes(d->help);
      for (const auto& c : d->commands) cmds += (cmds.empty() ? "" : ", ") + c;
      for (const CommandVariant& v : d->variants) {  // each command's own default and help, after the entry's
        if (v.default_text)
          dflt += (dflt.empty() ? "" : "; ") + v.command + ": " + (v.default_text->empty() ? "none" : "`" + *v.default_text + "`");
        if (!v.help.empty()) help += "; " + v.command + ": " + escape_pipes(v.help);
      }
      if (!d->env.empty()) help += " (env " + d->env + ": used when the flag is not given)";
      rows += "| `" + d->names + "` | " + dflt + " | " + cmds + " | " + help + " |\n";
    }
    if (!rows.empty())
      s += "\n### " + (g == group::kOwn ? std::string("Each command's own use of a shared name") : g) +
           "\n\n| flag | default | commands | help |\n|---|---|---|---|\n" + rows;
  }
  return s;
}

}  // namespace bt::cli

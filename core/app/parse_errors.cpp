// Parse errors of the command line in blis's style: what was wrong, the
// closest valid spelling, and where to look.
#include "app/commands.hpp"

#include "util/text.hpp"

#include <string>
#include <vector>

namespace blis::app {
namespace {

// Every long and short name of the options of `sub`, with dashes.
std::vector<std::string> flag_names(const CLI::App& sub) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : sub.get_options()) {
    for (const auto& n : opt->get_lnames()) out.push_back("--" + n);
    for (const auto& n : opt->get_snames()) out.push_back("-" + n);
  }
  return out;
}

}  // namespace

std::string explain_parse_error(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  // The subcommand chain the words name, e.g. `blis plugins inspect`.
  CLI::App* sub = &app;
  std::string path = "blis";
  int i = 1;
  for (; i < argc; ++i) {
    const std::string word = argv[i];
    if (!word.empty() && word[0] == '-') break;
    CLI::App* next = nullptr;
    for (CLI::App* s : sub->get_subcommands({})) if (s->get_name() == word) next = s;
    if (next == nullptr) break;
    sub = next;
    path += " " + word;
  }
  if (!sub->get_subcommands({}).empty() && i < argc && argv[i][0] != '-') {
    std::vector<std::string> commands;
    for (CLI::App* s : sub->get_subcommands({})) commands.push_back(s->get_name());
    return "unknown command '" + std::string(argv[i]) + "'" + text::did_you_mean(argv[i], commands) +
           " (commands of " + path + ": " + text::join(commands, ", ") + "; see " + path + " --help)";
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && i == argc && !sub->get_subcommands({}).empty() &&
      sub->get_require_subcommand_min() > 0) {
    std::vector<std::string> commands;
    for (CLI::App* s : sub->get_subcommands({})) commands.push_back(s->get_name());
    return path + " needs a command: " + text::join(commands, ", ") + " (see " + path + " --help)";
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const std::vector<std::string> known = flag_names(*sub);
    for (int k = i; k < argc; ++k) {
      std::string word = argv[k];
      if (word.size() < 2 || word[0] != '-') continue;
      const std::string name = word.substr(0, word.find('='));
      bool found = false;
      for (const auto& n : known) found = found || n == name;
      if (!found)
        return "unknown flag " + name + text::did_you_mean(name, known) + " (see " + path + " --help)";
    }
    return std::string(e.what()) + " (a value without its flag, or a second file? see " + path + " --help)";
  }
  return std::string(e.what()) + " (see " + path + " --help)";
}

}  // namespace blis::app

// `blis completion bash|zsh|fish`: a completion script written from the same
// CLI11 tree that --help prints (whose `run` and `plan` options are the rows of
// the settings table), with the values of each option from setting_values(),
// so the script never drifts from the flags.
#include "app/commands.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace blis::app {
namespace {

enum class ValueKind { None, Words, Files, Dirs, Text };

struct FlagSpec {
  std::vector<std::string> names;  // "--routing-policy", "-q"
  std::string help;
  ValueKind kind = ValueKind::None;
  std::vector<std::string> values;
};

struct CommandSpec {
  std::string path;  // "blis/plugins/list"
  std::string name, help;
  std::vector<std::string> subcommands;
  std::vector<FlagSpec> flags;
  ValueKind positional = ValueKind::None;  // what a word without a dash is
  std::vector<std::string> positional_values;
};

// Names a shell can take unquoted in a word list.
bool plain_word(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._/:+@-").find(c) != std::string_view::npos;
  });
}

std::vector<std::string> plain_words(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const auto& w : words)
    if (plain_word(w)) out.push_back(w);
  return out;
}

std::string first_sentence(std::string s) {
  for (const char* stop : {"; ", ". ", " (", ": "}) {
    const auto at = s.find(stop);
    if (at != std::string::npos && at > 8) s.resize(at);
  }
  if (s.size() > 70) s = s.substr(0, 67) + "...";
  return s;
}

ValueKind kind_of(const CLI::Option& opt, const SettingDef* def, const std::vector<std::string>& values) {
  if (def != nullptr) {
    if (!values.empty()) return ValueKind::Words;
    if (def->has(kInputPath) || def->has(kOutputPath) || def->has(kLibraryRef))
      return def->key == "report" ? ValueKind::Dirs : ValueKind::Files;
    return ValueKind::Text;
  }
  if (!values.empty()) return ValueKind::Words;
  const std::string type = opt.get_type_name();
  if (type.rfind("DIR", 0) == 0) return ValueKind::Dirs;
  if (type.rfind("FILE", 0) == 0) return ValueKind::Files;
  return ValueKind::Text;
}

void collect(const CLI::App& app, const std::string& path, const ValueSources& sources,
             std::vector<CommandSpec>& out) {
  CommandSpec c;
  c.path = path;
  c.name = app.get_name();
  c.help = first_sentence(app.get_description());
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    c.subcommands.push_back(sub->get_name());
  for (const CLI::Option* opt : app.get_options()) {
    const auto src = sources.find(opt);
    const SettingDef* def = src == sources.end() ? nullptr : src->second.setting;
    std::vector<std::string> values = src == sources.end() ? std::vector<std::string>{} : src->second.values();
    values = plain_words(values);
    if (!opt->nonpositional()) {
      c.positional = kind_of(*opt, def, values);
      c.positional_values = values;
      continue;
    }
    FlagSpec f;
    for (const auto& n : opt->get_lnames()) f.names.push_back("--" + n);
    for (const auto& n : opt->get_snames()) f.names.push_back("-" + n);
    f.help = first_sentence(opt->get_description());
    f.kind = opt->get_expected_min() == 0 || opt->get_type_size_max() == 0 ? ValueKind::None
                                                                            : kind_of(*opt, def, values);
    f.values = values;
    c.flags.push_back(std::move(f));
  }
  out.push_back(std::move(c));
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    collect(*sub, path + "/" + sub->get_name(), sources, out);
}

std::string joined(const std::vector<std::string>& words) { return fmt::format("{}", fmt::join(words, " ")); }

std::vector<std::string> flag_words(const CommandSpec& c) {
  std::vector<std::string> out;
  for (const FlagSpec& f : c.flags)
    for (const auto& n : f.names) out.push_back(n);
  return out;
}

// The `case` arm that follows the subcommand words typed so far.
std::string path_cases(const std::vector<CommandSpec>& commands, const char* var) {
  std::vector<std::string> arms;
  for (const CommandSpec& c : commands)
    for (const auto& s : c.subcommands) arms.push_back(c.path + "/" + s);
  return fmt::format("      {}) {}=\"${}/$w\" ;;\n", fmt::join(arms, "|"), var, var);
}

// The `case "$prev"` arms of one command (bash and zsh alike): each flag that
// takes a value, and what completes it.
std::string value_case(const CommandSpec& c, const std::function<std::string(const FlagSpec&)>& action) {
  std::string arms;
  for (const FlagSpec& f : c.flags)
    if (f.kind != ValueKind::None) arms += fmt::format("        {}) {}; return ;;\n", fmt::join(f.names, "|"), action(f));
  return arms.empty() ? "" : "      case \"$prev\" in\n" + arms + "      esac\n";
}

std::string bash_script(const std::vector<CommandSpec>& commands) {
  std::string s =
      "# bash completion for blis, written by `blis completion bash` from its flags.\n"
      "# Use: source <(blis completion bash)   (or save it in ~/.local/share/bash-completion/completions/blis)\n"
      "_blis() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=\"\" cmd=blis i w\n"
      "  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  # --flag=value: bash splits the words at '='\n"
      "  if [[ $cur == = ]]; then cur=\"\";\n"
      "  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=${COMP_WORDS[i]}\n"
      "    case \"$cmd/$w\" in\n" +
      path_cases(commands, "cmd") +
      "    esac\n"
      "  done\n"
      "  local flags=\"\" words=\"\" files=\"\"\n"
      "  case \"$cmd\" in\n";
  for (const CommandSpec& c : commands) {
    s += fmt::format("    {})\n", c.path);
    s += value_case(c, [](const FlagSpec& f) -> std::string {
      switch (f.kind) {
        case ValueKind::Words: return fmt::format("COMPREPLY=($(compgen -W '{}' -- \"$cur\"))", joined(f.values));
        case ValueKind::Files: return "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))";
        case ValueKind::Dirs: return "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))";
        default: return "COMPREPLY=()";
      }
    });
    std::vector<std::string> words = c.subcommands;
    if (c.positional == ValueKind::Words) words.insert(words.end(), c.positional_values.begin(), c.positional_values.end());
    s += fmt::format("      flags='{}'; words='{}'", joined(flag_words(c)), joined(words));
    if (c.positional == ValueKind::Files) s += "; files=f";
    if (c.positional == ValueKind::Dirs) s += "; files=d";
    s += " ;;\n";
  }
  s += "  esac\n"
       "  if [[ $cur == -* ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
       "  else\n"
       "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
       "    if [[ -n $files ]]; then\n"
       "      compopt -o filenames 2>/dev/null\n"
       "      COMPREPLY+=($(compgen -$files -- \"$cur\"))\n"
       "    fi\n"
       "  fi\n"
       "}\n"
       "complete -F _blis blis\n";
  return s;
}

std::string zsh_script(const std::vector<CommandSpec>& commands) {
  // `path` is special in zsh (tied to PATH): the command path is `cmd`.
  std::string s =
      "#compdef blis\n"
      "# zsh completion for blis, written by `blis completion zsh` from its flags.\n"
      "# Use: source <(blis completion zsh)   (after compinit), or save it as _blis in a folder of $fpath\n"
      "_blis() {\n"
      "  local cmd=blis i w prev=${words[CURRENT-1]} cur=${words[CURRENT]}\n"
      "  for ((i = 2; i < CURRENT; i++)); do\n"
      "    w=${words[i]}\n"
      "    case \"$cmd/$w\" in\n" +
      path_cases(commands, "cmd") +
      "    esac\n"
      "  done\n"
      "  case \"$cmd\" in\n";
  for (const CommandSpec& c : commands) {
    s += fmt::format("    {})\n", c.path);
    s += value_case(c, [](const FlagSpec& f) -> std::string {
      switch (f.kind) {
        case ValueKind::Words: return fmt::format("compadd -- {}", joined(f.values));
        case ValueKind::Files: return "_files";
        case ValueKind::Dirs: return "_files -/";
        default: return "_message value";
      }
    });
    s += fmt::format("      if [[ $cur == -* ]]; then compadd -- {}; return; fi\n", joined(flag_words(c)));
    std::vector<std::string> words = c.subcommands;
    if (c.positional == ValueKind::Words) words.insert(words.end(), c.positional_values.begin(), c.positional_values.end());
    if (!words.empty()) s += fmt::format("      compadd -- {}\n", joined(words));
    if (c.positional == ValueKind::Files) s += "      _files\n";
    if (c.positional == ValueKind::Dirs) s += "      _files -/\n";
    s += "      ;;\n";
  }
  s += "  esac\n"
       "}\n"
       "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _blis \"$@\"; else compdef _blis blis; fi\n";
  return s;
}

std::string fish_quote(const std::string& text) {
  std::string out = "'";
  for (char ch : text) {
    if (ch == '\'' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "'";
}

std::string fish_script(const std::vector<CommandSpec>& commands) {
  std::string s =
      "# fish completion for blis, written by `blis completion fish` from its flags.\n"
      "# Use: blis completion fish | source   (or save it in ~/.config/fish/completions/blis.fish)\n"
      "complete -c blis -f\n";
  for (const CommandSpec& c : commands) {
    // A subcommand's words and flags apply once its name was typed; the
    // top level's before any subcommand.
    std::string seen = c.path == "blis" ? "__fish_use_subcommand"
                                        : "__fish_seen_subcommand_from " + c.name;
    if (!c.subcommands.empty() && c.path != "blis")
      seen += "; and not __fish_seen_subcommand_from " + joined(c.subcommands);
    for (const CommandSpec& sub : commands)
      if (sub.path.rfind(c.path + "/", 0) == 0 && sub.path.find('/', c.path.size() + 1) == std::string::npos)
        s += fmt::format("complete -c blis -n {} -a {} -d {}\n", fish_quote(seen), sub.name, fish_quote(sub.help));
    if (c.positional == ValueKind::Files || c.positional == ValueKind::Dirs)
      s += fmt::format("complete -c blis -n {} -F\n", fish_quote(seen));
    if (c.positional == ValueKind::Words)
      s += fmt::format("complete -c blis -n {} -a {}\n", fish_quote(seen), fish_quote(joined(c.positional_values)));
    for (const FlagSpec& f : c.flags) {
      std::string line = fmt::format("complete -c blis -n {}", fish_quote(seen));
      for (const auto& n : f.names) line += (n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1));
      switch (f.kind) {
        case ValueKind::Words: line += " -x -a " + fish_quote(joined(f.values)); break;
        case ValueKind::Files:
        case ValueKind::Dirs: line += " -r -F"; break;
        case ValueKind::Text: line += " -x"; break;
        case ValueKind::None: break;
      }
      s += line + " -d " + fish_quote(f.help) + "\n";
    }
  }
  return s;
}

}  // namespace

std::string completion_script(const CLI::App& app, const std::string& shell, const ValueSources& sources) {
  std::vector<CommandSpec> commands;
  collect(app, "blis", sources, commands);
  if (shell == "bash") return bash_script(commands);
  if (shell == "zsh") return zsh_script(commands);
  if (shell == "fish") return fish_script(commands);
  throw Error("unknown shell '" + shell + "'; valid: bash, zsh, fish");
}

}  // namespace blis::app

// The error hierarchy of the core. main() catches these, prints
// "blis: error: <what>" and exits 2 (usage, configuration, plugin, script:
// also a plugin or script failing or returning nonsense mid-run, whichever
// way it came in) or 1 (an internal failure, an output that cannot be written).
#pragma once

#include <stdexcept>
#include <string>

namespace blis {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int exit_code = 2)
      : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Bad value of a flag or field. `where` names it ("--rate", "clients[0].arrival").
class InputError : public Error {
 public:
  InputError(const std::string& where, const std::string& what)
      : Error(where.empty() ? what : where + ": " + what), where_(where) {}
  // The flag or field path alone, so a caller that knows where the field was
  // written (a file position) can place the message there.
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

// A configuration file that cannot be read or understood; `where` is
// "file:line:col" when known.
class ConfigError : public Error {
 public:
  ConfigError(const std::string& where, const std::string& what)
      : Error(where.empty() ? what : where + ": " + what) {}
};

// A plugin library that cannot be loaded or an object that misbehaves; the
// message always starts with the library's path.
class PluginError : public Error {
 public:
  PluginError(const std::string& path, const std::string& what, int exit_code = 2)
      : Error(path + ": " + what, exit_code) {}
};

// A Lua script that fails; the message carries script:line and a traceback.
class ScriptError : public Error {
 public:
  explicit ScriptError(const std::string& what, int exit_code = 2) : Error(what, exit_code) {}
};

// An internal failure while the simulation runs (a broken invariant, an
// output that cannot be written). A misbehaving plugin is a PluginError or
// ScriptError instead (exit 2).
class RuntimeError : public Error {
 public:
  explicit RuntimeError(const std::string& what) : Error(what, 1) {}
};

}  // namespace blis

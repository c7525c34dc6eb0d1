// Declarative command-line / config-file options shared by every verb.
//
// A verb keeps its settings in a plain struct with commented defaults and registers each field
// once here, with its name, help text and valid range. From that one declaration come:
//   * parsing of `--name value` flags and of `--config FILE` (INI, same keys as the flags),
//   * the `--help` text (generated, never written by hand),
//   * validation (unknown keys and out-of-range values are usage errors naming the key),
//   * the resolved configuration as JSON, recorded in every HDF5 log,
//   * setting any field from a string by name (the sweep runner uses this for grids).
// Flags given on the command line override the config file.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gaugelab::io {

/// A bad command line or config: the front door prints it as one line and exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Closed or open bounds on a numeric option. Unset sides are unbounded.
struct Range {
  std::optional<double> lo, hi;
  bool lo_open = false, hi_open = false;  // true: the bound itself is excluded
  static Range positive() { return {0.0, std::nullopt, true, false}; }
  static Range non_negative() { return {0.0, std::nullopt, false, false}; }
  static Range at_least(double v) { return {v, std::nullopt, false, false}; }
  static Range closed(double a, double b) { return {a, b, false, false}; }
  static Range unit_open_closed() { return {0.0, 1.0, true, false}; }  // (0, 1]
  static Range any() { return {}; }
  bool contains(double v) const;
  std::string describe() const;  // e.g. "> 0", "in [0, 1]"
};

/// One registered option: how to parse it, show it, check it and record it.
struct OptionSpec {
  std::string name;         // flag name without dashes, also the INI key
  std::string help;
  std::string type;         // "real", "int", "string", "bool", "list"
  bool numeric = false;     // may be given as a comma list by `gaugelab sweep`
  bool positional = false;  // also accepted as the verb's positional argument
  bool multitoken = false;  // `--input a b c` (string lists); numeric lists take one comma token
  std::function<void(const std::string&)> set;  // parse text into the field; throws UsageError
  std::function<nlohmann::json()> get;          // current value as JSON
  std::function<std::string()> show;            // current value as text (defaults in --help)
  std::optional<Range> range{};                 // the declared range, when one is: the check, --help's
                                                // "(> 0)" and --describe-options all read this one copy
};

/// A flag that another setting fixes (a training condition's flag bundle): `name` takes `value`
/// because of `because` ("--condition N").
struct Implied {
  std::string name, value, because;
  std::string source;  // the option that implies it ("condition"): a command-line source overrides a config file
};

class Options {
 public:
  /// `verb` names the verb in messages and help ("toy relu"); `summary` is the help's first line.
  Options(std::string verb, std::string summary);

  // Registration. The field's current value is its default. Names use dashes: "n-train".
  Options& add(const std::string& name, double* field, const std::string& help, Range r = Range::any());
  Options& add(const std::string& name, std::int64_t* field, const std::string& help, Range r = Range::any());
  Options& add(const std::string& name, int* field, const std::string& help, Range r = Range::any());
  Options& add(const std::string& name, std::uint64_t* field, const std::string& help);
  Options& add(const std::string& name, bool* field, const std::string& help);  // switch: --name, --name=false
  Options& add(const std::string& name, std::string* field, const std::string& help,
               std::vector<std::string> choices = {});
  Options& add(const std::string& name, std::vector<std::string>* field, const std::string& help);  // comma list
  Options& add(const std::string& name, std::vector<double>* field, const std::string& help, Range r = Range::any());
  /// The verb's positional arguments go to this option (e.g. `inspect CKPT` -> --checkpoint).
  Options& positional(const std::string& name);
  /// A check across several fields, run after parsing; throw UsageError naming the keys.
  Options& check(std::function<void()> fn);
  /// Marks the option added last as part of a run's identity: a resumed run must keep its value
  /// (it decides the data order, the model or the optimizer's trajectory).
  Options& identity();
  /// Marks the option `name` (registered elsewhere, e.g. by add_run_flags) as part of the identity.
  Options& identity(const std::string& name);
  /// Flags fixed by other settings: after parsing, each (name, value) the function returns is set when
  /// the flag was not given; given with another value on the command line (or in the config file when
  /// the source is there too) it is a usage error naming both. A config file's value yields to a source
  /// given on the command line (the file holds defaults, the command line chooses), with a line saying so.
  Options& implies(std::function<std::vector<Implied>()> fn);
  /// A flag of one mode: `name` given while `mode` holds none of `values` is a usage error naming both
  /// ("--qk-cap applies only with --condition Dcap, but --condition is A"), never a setting silently
  /// ignored. Values are spelled as --print-config shows them ("true"/"false" for a switch, "" for a string
  /// not given). Checked by parse() after the implications (a condition's bundle counts as chosen). Like
  /// implies(), a config file holds defaults: its flag under a mode the command line chose is left unused
  /// with a line saying so; given on the command line, or with the mode in the same file, it is refused.
  Options& only_with(const std::string& name, const std::string& mode, std::vector<std::string> values);
  /// Runs `fn` in parse() after the command line and the config file are read, before the implications,
  /// the mode rules and the checks (train --resume fills in the run's saved settings there).
  Options& after_read(std::function<void()> fn);
  /// Applies the implications (parse() does; call it after set()). strict: every flag must already
  /// hold its implied value (a check of settings filled in code rather than parsed).
  void apply_implied(bool strict = false);
  /// The names marked identity(), in declaration order.
  std::vector<std::string> identity_names() const;
  /// Marks the option added last (or `name`) as transient: it acts on this invocation only (--resume, --force,
  /// --out), so a resumed run neither takes it from the run it continues nor reports its change.
  Options& transient();
  Options& transient(const std::string& name);
  /// The names marked transient(), in the order marked; whether `name` is one of them.
  std::vector<std::string> transient_names() const { return transient_; }
  bool is_transient(const std::string& name) const;

  /// Parses argv (argv[0] is the verb path, not looked at). Returns false if --help was printed, or
  /// --print-config (the resolved settings as JSON, after validation: a dry run), or
  /// --describe-options (every option's name, type, default and range as JSON, for tools and tests).
  /// Throws UsageError for unknown keys, bad values, out-of-range values and failed checks.
  bool parse(const std::vector<std::string>& args);

  /// Sets one option from text, by name, with the same parsing and range check as the command line.
  void set(const std::string& name, const std::string& value);
  /// Runs every range and cross-field check (parse() does this; call it after set()).
  void validate() const;

  bool has(const std::string& name) const;
  bool is_numeric(const std::string& name) const;
  const std::vector<OptionSpec>& specs() const { return specs_; }
  /// The names the user gave explicitly (command line or config file), in order.
  const std::vector<std::string>& given() const { return given_; }

  nlohmann::json to_json() const;  // every option, resolved
  std::string help() const;        // generated from the declarations
  nlohmann::json describe() const; // [{name, type, default, lo, hi, lo_open, hi_open, choices?}, ...]
  const std::string& verb() const { return verb_; }

 private:
  OptionSpec& spec(const std::string& name);
  const OptionSpec* find(const std::string& name) const;
  Options& push(OptionSpec s, std::function<void()> check, const Range& r = Range::any());

  std::string verb_, summary_;
  std::vector<OptionSpec> specs_;
  std::vector<std::function<void()>> checks_;
  std::vector<std::function<std::vector<Implied>()>> implied_;
  struct ModeRule {
    std::string name, mode;
    std::vector<std::string> values;
  };
  std::vector<ModeRule> modes_;
  std::vector<std::function<void()>> after_read_;
  void check_modes() const;
  std::vector<std::string> identity_;  // names marked identity(), in the order marked
  std::vector<std::string> transient_;  // names marked transient(), in the order marked
  std::vector<std::string> positional_;
  std::vector<std::string> given_;
  std::vector<std::string> given_cli_;  // the subset of given_ typed on the command line (not from --config)
};

/// `text` if it is valid UTF-8, else the same text with every byte that is not part of a valid UTF-8
/// sequence written as the four characters \xNN. JSON (the recorded configuration, logs, metadata) holds
/// only UTF-8, while a Linux path may hold any byte: such a path is used as the bytes it is and recorded
/// in this escaped form (the same form every time, so a resume compares equal).
std::string utf8_safe(const std::string& text);

/// Splits "a,b,c" (no empty items allowed; whitespace trimmed).
std::vector<std::string> split_list(const std::string& text, const std::string& what);
/// Strict number parsing: the whole text must be a finite number (NaN/Inf rejected), else UsageError.
double parse_real(const std::string& text, const std::string& what);
std::int64_t parse_int(const std::string& text, const std::string& what);
bool parse_bool(const std::string& text, const std::string& what);

}  // namespace gaugelab::io

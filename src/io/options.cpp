#include "io/options.hpp"

#include "io/dry_run_guard.hpp"

#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace po = boost::program_options;

namespace gaugelab::io {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

std::string fmt_real(double v) {
  std::ostringstream os;
  os.precision(12);
  os << v;
  return os.str();
}

std::string join(const std::vector<std::string>& v, const char* sep = ",") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

}  // namespace

bool Range::contains(double v) const {
  if (lo && (lo_open ? !(v > *lo) : !(v >= *lo))) return false;
  if (hi && (hi_open ? !(v < *hi) : !(v <= *hi))) return false;
  return true;
}

std::string Range::describe() const {
  if (lo && hi)
    return std::string("in ") + (lo_open ? "(" : "[") + fmt_real(*lo) + ", " + fmt_real(*hi) + (hi_open ? ")" : "]");
  if (lo) return std::string(lo_open ? "> " : ">= ") + fmt_real(*lo);
  if (hi) return std::string(hi_open ? "< " : "<= ") + fmt_real(*hi);
  return "any value";
}

namespace {

// A value as an error message quotes it: whole when short, else its ends and its length (a 309-digit
// number once made a 330-character "one line").
std::string quoted(const std::string& text) {
  constexpr std::size_t kWhole = 40, kEnd = 12;
  if (text.size() <= kWhole) return "'" + text + "'";
  return "'" + text.substr(0, kEnd) + "..." + text.substr(text.size() - kEnd) + "' (" + std::to_string(text.size()) +
         " characters)";
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream is(text);
  while (std::getline(is, item, ',')) {
    item = trim(item);
    if (item.empty()) throw UsageError(what + ": empty item in list " + quoted(text));
    out.push_back(item);
  }
  // getline yields no item after a trailing comma: "0," is refused like "0,,1".
  if (!out.empty() && trim(text).back() == ',') throw UsageError(what + ": empty item in list " + quoted(text));
  if (out.empty()) throw UsageError(what + ": empty list");
  return out;
}

double parse_real(const std::string& text, const std::string& what) {
  const std::string t = trim(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size()) throw UsageError(what + ": " + quoted(text) + " is not a number");
  if (std::isnan(v)) throw UsageError(what + ": " + quoted(text) + " is not a finite number (NaN)");
  if (std::isinf(v) && errno != ERANGE) throw UsageError(what + ": " + quoted(text) + " is not a finite number (infinite)");
  if (errno == ERANGE && std::fabs(v) > 1.0)
    throw UsageError(what + ": " + quoted(text) + " is beyond the largest double (about 1.8e308)");
  if (errno == ERANGE)  // glibc: below the smallest normal double, rounded (subnormal or 0)
    throw UsageError(what + ": " + quoted(text) + " is too close to 0 for a double (below about 2.2e-308 in "
                     "magnitude); give 0 or a larger value");
  return v;
}

std::int64_t parse_int(const std::string& text, const std::string& what) {
  const std::string t = trim(text);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (!t.empty() && end != t.c_str() + t.size()) {
    // Accept integral reals such as "1e6" (common in sweeps), reject 1.5.
    const double d = parse_real(t, what);
    if (d != std::floor(d)) throw UsageError(what + ": " + quoted(text) + " is not an integer");
    if (std::fabs(d) > 9.0e18) throw UsageError(what + ": " + quoted(text) + " is beyond the 64-bit integer range (about 9.2e18)");
    return static_cast<std::int64_t>(d);
  }
  if (t.empty()) throw UsageError(what + ": empty value");
  if (errno == ERANGE) throw UsageError(what + ": " + quoted(text) + " is beyond the 64-bit integer range (about 9.2e18)");
  return v;
}

bool parse_bool(const std::string& text, const std::string& what) {
  const std::string t = trim(text);
  if (t == "true" || t == "1" || t == "yes" || t == "on") return true;
  if (t == "false" || t == "0" || t == "no" || t == "off") return false;
  throw UsageError(what + ": " + quoted(text) + " is not a boolean (true/false)");
}

std::string utf8_safe(const std::string& text) {
  // Length of the valid UTF-8 sequence at text[i] (RFC 3629: no overlongs, no surrogates, <= U+10FFFF), 0 if none.
  auto valid_at = [&](std::size_t i) -> std::size_t {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned c = b(i);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) n = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) n = 3;
    else if (c == 0xED) n = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) n = 3;
    else if (c == 0xF0) n = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) n = 4, hi = 0x8F;
    else return 0;
    if (i + n > text.size()) return 0;
    if (b(i + 1) < lo || b(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
      if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
    return n;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (const std::size_t n = valid_at(i)) {
      out.append(text, i, n);
      i += n;
    } else {
      static const char* hex = "0123456789abcdef";
      const auto c = static_cast<unsigned char>(text[i++]);
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

Options::Options(std::string verb, std::string summary) : verb_(std::move(verb)), summary_(std::move(summary)) {}

Options& Options::push(OptionSpec s, std::function<void()> check, const Range& r) {
  if (find(s.name)) throw std::logic_error("option --" + s.name + " registered twice for " + verb_);
  if (r.lo || r.hi) s.range = r;
  specs_.push_back(std::move(s));
  if (check) checks_.push_back(std::move(check));
  return *this;
}

Options& Options::add(const std::string& name, double* f, const std::string& help, Range r) {
  const std::string key = "--" + name;
  return push({name, help, "real", true, false, false,
               [f, key](const std::string& t) { *f = parse_real(t, key); },
               [f] { return nlohmann::json(*f); }, [f] { return fmt_real(*f); }},
              [f, r, key] {
                if (!r.contains(*f)) throw UsageError(key + " must be " + r.describe() + ", got " + fmt_real(*f));
              },
              r);
}

Options& Options::add(const std::string& name, std::int64_t* f, const std::string& help, Range r) {
  const std::string key = "--" + name;
  return push({name, help, "int", true, false, false,
               [f, key](const std::string& t) { *f = parse_int(t, key); },
               [f] { return nlohmann::json(*f); }, [f] { return std::to_string(*f); }},
              [f, r, key] {
                if (!r.contains(static_cast<double>(*f)))
                  throw UsageError(key + " must be " + r.describe() + ", got " + std::to_string(*f));
              },
              r);
}

Options& Options::add(const std::string& name, int* f, const std::string& help, Range r) {
  const std::string key = "--" + name;
  return push({name, help, "int", true, false, false,
               [f, key](const std::string& t) {
                 const auto v = parse_int(t, key);
                 if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
                   throw UsageError(key + ": " + quoted(t) + " is beyond the range of this integer option (about 2.1e9)");
                 *f = static_cast<int>(v);
               },
               [f] { return nlohmann::json(*f); }, [f] { return std::to_string(*f); }},
              [f, r, key] {
                if (!r.contains(*f)) throw UsageError(key + " must be " + r.describe() + ", got " + std::to_string(*f));
              },
              r);
}

Options& Options::add(const std::string& name, std::uint64_t* f, const std::string& help) {
  const std::string key = "--" + name;
  return push({name, help, "int", true, false, false,
               [f, key](const std::string& t) {
                 const auto v = parse_int(t, key);
                 if (v < 0) throw UsageError(key + " must be >= 0, got " + quoted(t));
                 *f = static_cast<std::uint64_t>(v);
               },
               [f] { return nlohmann::json(*f); }, [f] { return std::to_string(*f); }},
              {});
}

Options& Options::add(const std::string& name, bool* f, const std::string& help) {
  const std::string key = "--" + name;
  return push({name, help, "bool", false, false, false, [f, key](const std::string& t) { *f = parse_bool(t, key); },
               [f] { return nlohmann::json(*f); }, [f] { return std::string(*f ? "true" : "false"); }},
              {});
}

Options& Options::add(const std::string& name, std::string* f, const std::string& help,
                      std::vector<std::string> choices) {
  const std::string key = "--" + name;
  std::string h = help;
  if (!choices.empty()) h += " (one of: " + join(choices, ", ") + ")";
  return push({name, h, "string", false, false, false, [f](const std::string& t) { *f = trim(t); },
               [f] { return nlohmann::json(utf8_safe(*f)); }, [f] { return *f; }},
              choices.empty() ? std::function<void()>{}
                              : std::function<void()>{[f, choices, key] {
                                  for (const auto& c : choices)
                                    if (*f == c) return;
                                  throw UsageError(key + " must be one of " + join(choices, ", ") + ", got '" + *f + "'");
                                }});
}

Options& Options::add(const std::string& name, std::vector<std::string>* f, const std::string& help) {
  const std::string key = "--" + name;
  return push({name, help, "list", false, false, true,
               [f, key](const std::string& t) { *f = split_list(t, key); },
               [f] {
                 nlohmann::json j = nlohmann::json::array();
                 for (const auto& item : *f) j.push_back(utf8_safe(item));
                 return j;
               },
               [f] { return join(*f); }},
              {});
}

Options& Options::add(const std::string& name, std::vector<double>* f, const std::string& help, Range r) {
  const std::string key = "--" + name;
  return push({name, help, "list", false, false, false,
               [f, key](const std::string& t) {
                 f->clear();
                 for (auto& s : split_list(t, key)) f->push_back(parse_real(s, key));
               },
               [f] { return nlohmann::json(*f); },
               [f] {
                 std::vector<std::string> s;
                 for (double v : *f) s.push_back(fmt_real(v));
                 return join(s);
               }},
              [f, r, key] {
                for (double v : *f)
                  if (!r.contains(v)) throw UsageError(key + " items must be " + r.describe() + ", got " + fmt_real(v));
              },
              r);
}

Options& Options::positional(const std::string& name) {
  spec(name).positional = true;
  positional_.push_back(name);
  return *this;
}

Options& Options::check(std::function<void()> fn) {
  checks_.push_back(std::move(fn));
  return *this;
}

Options& Options::identity() {
  if (specs_.empty()) throw std::logic_error("Options::identity() before any option of " + verb_);
  identity_.push_back(specs_.back().name);
  return *this;
}

Options& Options::identity(const std::string& name) {
  identity_.push_back(spec(name).name);
  return *this;
}

Options& Options::transient() {
  if (specs_.empty()) throw std::logic_error("Options::transient() before any option of " + verb_);
  transient_.push_back(specs_.back().name);
  return *this;
}

Options& Options::transient(const std::string& name) {
  transient_.push_back(spec(name).name);
  return *this;
}

bool Options::is_transient(const std::string& name) const {
  return std::find(transient_.begin(), transient_.end(), name) != transient_.end();
}

Options& Options::implies(std::function<std::vector<Implied>()> fn) {
  implied_.push_back(std::move(fn));
  return *this;
}

Options& Options::only_with(const std::string& name, const std::string& mode, std::vector<std::string> values) {
  if (!find(name) || !find(mode) || values.empty())
    throw std::logic_error("Options::only_with(" + name + ", " + mode + ") of " + verb_ + ": register both first");
  modes_.push_back({name, mode, std::move(values)});
  return *this;
}

Options& Options::after_read(std::function<void()> fn) {
  after_read_.push_back(std::move(fn));
  return *this;
}

namespace {

// An option's value as --print-config spells it, for the mode rules ("A", "true", "", "0.5").
std::string value_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// "with --condition Dcap or E", "without --synthetic", "without --corpus".
std::string mode_needed(const std::string& mode, const std::vector<std::string>& values) {
  if (values.size() == 1 && (values[0].empty() || values[0] == "false")) return "without --" + mode;
  if (values.size() == 1 && values[0] == "true") return "with --" + mode;
  std::string out = "with --" + mode + " ";
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
  return out;
}

// "--condition is A", "--synthetic is given", "--corpus is not given".
std::string mode_now(const std::string& mode, const std::string& value) {
  if (value.empty() || value == "false") return "--" + mode + " is not given";
  if (value == "true") return "--" + mode + " is given";
  return "--" + mode + " is " + value;
}

}  // namespace

void Options::check_modes() const {
  auto in = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  for (const ModeRule& r : modes_) {
    if (!in(given_, r.name)) continue;
    const std::string now = value_text(find(r.mode)->get());
    if (in(r.values, now)) continue;
    const std::string why = "applies only " + mode_needed(r.mode, r.values) + ", but " + mode_now(r.mode, now);
    if (in(given_cli_, r.name)) throw UsageError("--" + r.name + " " + why);
    if (!in(given_cli_, r.mode))  // the file itself sets both, or only the flag: the file is wrong
      throw UsageError("--" + r.name + " (from --config) " + why);
    std::cerr << verb_ << ": the config file's --" << r.name << " is unused: it " << why << "\n";
  }
}

void Options::apply_implied(bool strict) {
  for (const auto& fn : implied_)
    for (const Implied& imp : fn()) {
      OptionSpec& s = spec(imp.name);
      const nlohmann::json now = s.get();
      auto in = [](const std::vector<std::string>& v, const std::string& n) {
        return std::find(v.begin(), v.end(), n) != v.end();
      };
      const bool on_cli = in(given_cli_, imp.name), in_file = in(given_, imp.name) && !on_cli;
      const bool source_on_cli = in(given_cli_, imp.source);
      s.set(imp.value);
      if (s.get() == now) continue;
      const std::string was = now.is_string() ? now.get<std::string>() : now.dump();
      if (strict || on_cli || (in_file && !source_on_cli))
        throw UsageError(imp.because + " sets --" + imp.name + " " + imp.value + ", but --" + imp.name + " " + was +
                         " was given (drop it)");
      if (in_file)
        std::cerr << verb_ << ": " << imp.because << " sets --" << imp.name << " " << imp.value << " over the config file's "
                  << was << "\n";
    }
}

std::vector<std::string> Options::identity_names() const {
  std::vector<std::string> out;
  for (const auto& s : specs_)  // declaration order
    if (std::find(identity_.begin(), identity_.end(), s.name) != identity_.end()) out.push_back(s.name);
  return out;
}

const OptionSpec* Options::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

OptionSpec& Options::spec(const std::string& name) {
  for (auto& s : specs_)
    if (s.name == name) return s;
  throw UsageError("unknown option '--" + name + "'");
}

bool Options::has(const std::string& name) const { return find(name) != nullptr; }
bool Options::is_numeric(const std::string& name) const {
  const auto* s = find(name);
  return s && s->numeric;
}

void Options::set(const std::string& name, const std::string& value) { spec(name).set(value); }

void Options::validate() const {
  for (const auto& c : checks_) c();
}

namespace {

// ", line N" of the first line of the INI file `path` that sets the option `e` names ("" if not found).
std::string config_error_place(const std::string& path, const po::error& e) {
  if (const auto* s = dynamic_cast<const po::invalid_config_file_syntax*>(&e)) {  // the line itself is known
    std::ifstream in(path);
    std::string line;
    const std::string bad = s->tokens();
    for (int n = 1; !bad.empty() && std::getline(in, line); ++n)
      if (line.find(bad) != std::string::npos) return ", line " + std::to_string(n);
    return "";
  }
  std::string key;
  if (const auto* u = dynamic_cast<const po::error_with_option_name*>(&e)) key = u->get_option_name();
  while (!key.empty() && key.front() == '-') key.erase(0, 1);
  if (key.empty()) return "";
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    const std::size_t eq = line.find('=', b);
    std::string k = line.substr(b, eq == std::string::npos ? std::string::npos : eq - b);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
    if (k == key) return ", line " + std::to_string(n);
  }
  return "";
}

// The message of a Boost.Program_options error. Its option errors build theirs by replacing placeholders
// (%canonical_option%, %value%, %invalid_line%, ...) with the user's text until none is left, so a text
// holding a placeholder's name loops for ever (Boost 1.74; found by fuzzing: the INI line
// "%invalid_line%" hung --config). Those errors are described from their parts, never through what().
std::string po_message(const po::error& e) {
  const auto* named = dynamic_cast<const po::error_with_option_name*>(&e);
  if (!named) return e.what();
  const std::string name = named->get_option_name();
  if (const auto* s = dynamic_cast<const po::invalid_config_file_syntax*>(&e))
    return "the line '" + s->tokens() + "' is not KEY = VALUE";
  if (dynamic_cast<const po::unknown_option*>(&e)) return "unknown option '" + name + "' (see --help)";
  if (dynamic_cast<const po::ambiguous_option*>(&e)) return "ambiguous option '" + name + "'";
  if (dynamic_cast<const po::multiple_occurrences*>(&e)) return "option '" + name + "' is given more than once";
  if (dynamic_cast<const po::multiple_values*>(&e)) return "option '" + name + "' takes one value";
  if (dynamic_cast<const po::required_option*>(&e)) return "option '" + name + "' is required";
  if (const auto* s = dynamic_cast<const po::invalid_syntax*>(&e)) {
    switch (s->kind()) {
      case po::invalid_syntax::missing_parameter: return "option '" + name + "' needs a value";
      case po::invalid_syntax::extra_parameter: return "option '" + name + "' takes no value";
      case po::invalid_syntax::empty_adjacent_parameter: return "option '" + name + "' has an empty value after '='";
      default: return "malformed option '" + name + "'";
    }
  }
  if (dynamic_cast<const po::validation_error*>(&e)) return "invalid value for option '" + name + "'";
  return "invalid use of option '" + name + "'";
}


// A switch (a bool flag) takes the next word only when that word is a boolean (`--force false`); otherwise it is
// on and the word stays a positional argument (`--force x.txt`). Boost's implicit value would take any next word
// and refuse it as "not a boolean", so each bare switch is bound here to its value (`--force=false`, `--force=true`).
std::vector<std::string> switches_bound(const std::vector<std::string>& args,
                                        const std::function<bool(const std::string&)>& is_switch) {
  static const std::vector<std::string> words = {"true", "1", "yes", "on", "false", "0", "no", "off"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {  // everything after it is positional
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (a.size() > 2 && a.compare(0, 2, "--") == 0 && a.find('=') == std::string::npos && is_switch(a.substr(2))) {
      const bool valued = i + 1 < args.size() && std::find(words.begin(), words.end(), trim(args[i + 1])) != words.end();
      out.push_back(a + "=" + (valued ? args[++i] : std::string("true")));
      continue;
    }
    out.push_back(a);
  }
  return out;
}

// A flag given more than once on the command line: its last occurrence is kept and a line on stderr names
// it (what argparse users expect). A list flag gathers every occurrence instead (`--input a --input b`).
void keep_last_of_repeats(po::parsed_options& parsed, const std::string& verb,
                          const std::function<bool(const std::string&)>& is_list) {
  auto& opts = parsed.options;
  std::vector<std::string> seen, noted;
  for (std::size_t i = opts.size(); i-- > 0;) {
    const po::option& o = opts[i];
    if (o.position_key != -1 || o.string_key.empty() || is_list(o.string_key)) continue;
    if (std::find(seen.begin(), seen.end(), o.string_key) == seen.end()) {
      seen.push_back(o.string_key);
      continue;
    }
    if (std::find(noted.begin(), noted.end(), o.string_key) == noted.end()) {
      noted.push_back(o.string_key);
      const auto last = std::find_if(opts.rbegin(), opts.rend(), [&](const po::option& x) {
        return x.position_key == -1 && x.string_key == o.string_key;
      });
      std::string value;
      for (const auto& t : last->value) value += " " + t;
      std::cerr << verb << ": --" << o.string_key << " is given more than once; the last (--" << o.string_key << value
                << ") is used\n";
    }
    opts.erase(opts.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

}  // namespace

bool Options::parse(const std::vector<std::string>& args) {
  po::options_description desc;
  desc.add_options()("help,h", "")("config", po::value<std::string>(), "")("print-config", "")("describe-options", "");
  for (const auto& s : specs_) {
    if (s.type == "bool")
      desc.add_options()(s.name.c_str(), po::value<std::string>()->implicit_value("true"), "");
    else if (s.type == "list")
      desc.add_options()(s.name.c_str(), s.multitoken ? po::value<std::vector<std::string>>()->multitoken()
                                                     : po::value<std::vector<std::string>>(), "");
    else
      desc.add_options()(s.name.c_str(), po::value<std::string>(), "");
  }
  po::positional_options_description pos;
  for (const auto& p : positional_) pos.add(p.c_str(), spec(p).type == "list" ? -1 : 1);

  po::variables_map vm;
  std::vector<std::string> cli_names;  // what the command line itself gave (before --config fills in)
  try {
    // allow_long_disguise off, no abbreviations: a misspelled flag must never match another.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::parsed_options parsed =
        po::command_line_parser(switches_bound(args, [this](const std::string& n) {
          const OptionSpec* s = find(n);
          return s && s->type == "bool";
        })).options(desc).positional(pos).style(style).run();
    keep_last_of_repeats(parsed, verb_, [this](const std::string& n) {
      const OptionSpec* s = find(n);
      return s && s->type == "list";
    });
    po::store(parsed, vm);
    for (const auto& kv : vm) cli_names.push_back(kv.first);
    if (vm.count("help")) {
      std::cout << help();
      return false;
    }
    if (vm.count("describe-options")) {
      std::cout << describe().dump(1) << "\n";
      return false;
    }
    if (vm.count("config")) {
      const std::string path = vm["config"].as<std::string>();
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec)) throw UsageError("--config " + path + " is a directory, not an INI file");
      std::ifstream in(path);
      if (!in) throw UsageError("cannot open config file '" + path + "'");
      // Command-line values were stored first and win; the file fills in the rest.
      try {
        po::store(po::parse_config_file(in, desc, /*allow_unregistered=*/false), vm);
      } catch (const po::error& e) {
        throw UsageError("--config " + path + config_error_place(path, e) + ": " + po_message(e));
      }
    }
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    throw UsageError("unknown option '" + e.get_option_name() + "' (see --help)");
  } catch (const po::too_many_positional_options_error&) {
    throw UsageError("too many positional arguments (see --help)");
  } catch (const po::error& e) {
    throw UsageError(po_message(e));
  }

  given_.clear();
  given_cli_.clear();
  for (auto& s : specs_) {
    if (!vm.count(s.name)) continue;
    given_.push_back(s.name);
    if (std::find(cli_names.begin(), cli_names.end(), s.name) != cli_names.end()) given_cli_.push_back(s.name);
    if (s.type == "list") {
      // Multiple tokens (`--input a b`) and comma lists (`--input a,b`) give one list.
      s.set(join(vm[s.name].as<std::vector<std::string>>()));
    } else {
      s.set(vm[s.name].as<std::string>());
    }
  }
  for (const auto& fn : after_read_) fn();
  apply_implied();
  check_modes();
  validate();
  if (vm.count("print-config")) {
    std::cout << to_json().dump(1) << "\n";
    return false;
  }
  if (dry_runs_only())
    throw UsageError("not a dry run: only --print-config, --describe-options or --help may run here (--probe-batch)");
  return true;
}

namespace {
bool g_dry_runs_only = false;
}  // namespace

void set_dry_runs_only(bool on) { g_dry_runs_only = on; }
bool dry_runs_only() { return g_dry_runs_only; }

nlohmann::json Options::describe() const {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& s : specs_) {
    nlohmann::json j = {{"name", s.name}, {"type", s.type}, {"numeric", s.numeric}, {"default", s.get()}};
    if (s.range) {
      const Range& r = *s.range;
      if (r.lo) j["lo"] = *r.lo, j["lo_open"] = r.lo_open;
      if (r.hi) j["hi"] = *r.hi, j["hi_open"] = r.hi_open;
    }
    all.push_back(std::move(j));
  }
  return all;
}

nlohmann::json Options::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& s : specs_) j[s.name] = s.get();
  return j;
}

std::string Options::help() const {
  std::ostringstream os;
  os << "usage: gaugelab " << verb_;
  for (const auto& p : positional_) os << " [" << p << "]";
  os << " [options]\n\n" << summary_ << "\n\noptions (also accepted as KEY = VALUE lines in --config FILE):\n";
  size_t w = 0;
  for (const auto& s : specs_) w = std::max(w, s.name.size() + s.type.size() + 5);
  w = std::max<size_t>(w, 22);
  auto line = [&](const std::string& left, const std::string& text) {
    os << "  " << left << std::string(w > left.size() ? w - left.size() : 1, ' ') << text << "\n";
  };
  for (const auto& s : specs_) {
    std::string def = s.show();
    const std::string range = s.range ? " (" + s.range->describe() + ")" : "";
    line("--" + s.name + " <" + s.type + ">", s.help + range + (def.empty() ? "" : " [default: " + def + "]"));
  }
  line("--config <file>", "read options from an INI file; flags on the command line win");
  line("--print-config", "print the resolved settings as JSON and exit (a dry run: nothing is read or written)");
  line("--describe-options", "print every option's type, default and range as JSON and exit");
  line("--help", "show this help");
  return os.str();
}

}  // namespace gaugelab::io

// `gaugelab eval | generate | export | import` -> gpt2/use/api.hpp (no LibTorch header here). These verbs
// print no settings line: their output is the answer (a loss, text, files), and `--print-config` shows
// the resolved settings when they are wanted (an `eval --out` or `generate --out` log records them).
#include <iostream>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "verb_skeleton.hpp"
#include "verbs.hpp"

#ifdef GAUGELAB_WITH_TORCH
#include "gpt2/use/api.hpp"
#endif

namespace gaugelab::cli {

#ifdef GAUGELAB_WITH_TORCH

namespace {

io::Provenance provenance(const char* verb, const Args& args, const io::Options& opts, std::uint64_t seed) {
  return verb_provenance(std::string("gpt2/") + verb, verb, args, opts.to_json(), seed);
}

}  // namespace

int verb_eval(const Args& args) {
  gpt2::EvalOptions o;
  io::Options opts = gpt2::eval_options(o);
  if (!opts.parse(args)) return 0;
  gpt2::run_eval(o, provenance("eval", args, opts, o.run.seed));
  return 0;
}

int verb_generate(const Args& args) {
  gpt2::GenerateOptions o;
  io::Options opts = gpt2::generate_options(o);
  if (!opts.parse(args)) return 0;
  gpt2::run_generate(o, provenance("generate", args, opts, o.run.seed));
  return 0;
}

int verb_export(const Args& args) {
  gpt2::ExportOptions o;
  io::Options opts = gpt2::export_options(o);
  if (!opts.parse(args)) return 0;
  gpt2::run_export(o);
  return 0;
}

int verb_import(const Args& args) {
  gpt2::ImportOptions o;
  io::Options opts = gpt2::import_options(o);
  if (!opts.parse(args)) return 0;
  gpt2::run_import(o);
  return 0;
}

#else  // built without the GPT-2 tier

int verb_eval(const Args&) { return not_built("eval", "GPT-2 model; configure with GAUGELAB_WITH_TORCH=ON"); }
int verb_generate(const Args&) { return not_built("generate", "GPT-2 model; configure with GAUGELAB_WITH_TORCH=ON"); }
int verb_export(const Args&) { return not_built("export", "GPT-2 interchange; configure with GAUGELAB_WITH_TORCH=ON"); }
int verb_import(const Args&) { return not_built("import", "GPT-2 interchange; configure with GAUGELAB_WITH_TORCH=ON"); }

#endif

}  // namespace gaugelab::cli

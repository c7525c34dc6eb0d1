// A process-wide switch for the front door's `--probe-batch` (cli/main.cpp), which dispatches many command
// lines in one process: while it is on, Options::parse() refuses (UsageError) a command line that would go
// past parsing, i.e. one whose parsed flags hold none of --help, --describe-options and --print-config. A word
// "--print-config" taken as another flag's value (`--out --print-config`) therefore does not make a run.
// Off by default.
#pragma once

namespace gaugelab::io {

void set_dry_runs_only(bool on);
bool dry_runs_only();

}  // namespace gaugelab::io

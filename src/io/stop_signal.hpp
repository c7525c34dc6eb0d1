// A graceful stop on SIGTERM/SIGINT for the long loops of a run (training, and the evaluation and
// sampling inside it): while a StopSignals lives the two signals only raise a flag, which every such loop
// reads between its units of work (a batch, a token) and then winds down, keeping what it has written.
#pragma once

namespace gaugelab::io {

/// Installs the handlers for its lifetime (the previous ones come back after); not nested.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  /// The signal received (SIGTERM or SIGINT), 0 if none.
  int requested() const;

 private:
  void (*prev_term_)(int);
  void (*prev_int_)(int);
};

/// The signal a live StopSignals has received, 0 if none (or none lives): what a loop deep inside a run
/// reads to stop early.
int stop_requested();

/// "SIGTERM" or "SIGINT".
const char* stop_signal_name(int sig);

}  // namespace gaugelab::io

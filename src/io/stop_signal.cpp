#include "io/stop_signal.hpp"

#include <atomic>
#include <csignal>

namespace gaugelab::io {

namespace {

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int sig) { g_stop_signal.store(sig); }

}  // namespace

StopSignals::StopSignals() {
  g_stop_signal.store(0);
  prev_term_ = std::signal(SIGTERM, on_stop_signal);
  prev_int_ = std::signal(SIGINT, on_stop_signal);
}

StopSignals::~StopSignals() {
  std::signal(SIGTERM, prev_term_);
  std::signal(SIGINT, prev_int_);
}

int StopSignals::requested() const { return g_stop_signal.load(); }

int stop_requested() { return g_stop_signal.load(); }

const char* stop_signal_name(int sig) { return sig == SIGTERM ? "SIGTERM" : "SIGINT"; }

}  // namespace gaugelab::io

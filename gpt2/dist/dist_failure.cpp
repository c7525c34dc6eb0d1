// A failed collective in one line (dist_failure.hpp). No c10d here.
#include "gpt2/dist/dist_failure.hpp"

#include <sstream>

namespace gaugelab::gpt2 {

namespace {

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

/// The backend's own words: without Gloo's leading source location ("[.../gloo/transport/tcp/pair.cc:534] ")
/// and without the advice c10d appends to Gloo's socket errors (". This is typically caused by a remote worker
/// hanging or bugs in the application. Check the logs of the remote worker ..."), which the line replaces.
std::string backend_words(std::string msg) {
  if (!msg.empty() && msg[0] == '[') {
    const auto close = msg.find("] ");
    if (close != std::string::npos) {
      const std::string inside = msg.substr(1, close - 1);
      if (inside.find(".cc:") != std::string::npos || inside.find(".cpp:") != std::string::npos ||
          inside.find(".h:") != std::string::npos)
        msg.erase(0, close + 2);
    }
  }
  const auto advice = msg.find(" This is typically caused by");
  if (advice != std::string::npos) msg.resize(advice);
  while (!msg.empty() && (msg.back() == '.' || msg.back() == ' ')) msg.pop_back();
  return msg;
}

}  // namespace

PeerFault classify_peer_fault(const std::string& m) {
  if (has(m, "Connection closed by peer") || has(m, "Connection reset by peer") || has(m, "Broken pipe"))
    return PeerFault::closed;
  if (has(m, "Timed out") || has(m, "timed out")) return PeerFault::timed_out;
  return PeerFault::unknown;
}

std::optional<int> failed_peer_rank(int rank, int world) {
  if (world == 2 && (rank == 0 || rank == 1)) return 1 - rank;
  return std::nullopt;
}

std::string collective_failure_message(const std::string& where, int rank, int world, const std::string& op,
                                       double timeout_s, const std::string& backend_message) {
  const std::optional<int> peer = failed_peer_rank(rank, world);
  const std::string who = peer ? "rank " + std::to_string(*peer) : std::string("a rank");
  std::string cause, note;  // what happened; what qualifies it, inside the parentheses before the timeout
  switch (classify_peer_fault(backend_message)) {
    case PeerFault::closed:
      cause = who + " is gone";
      note = peer ? "its connection closed" : "a connection closed; the backend names the peer by address, not by rank";
      break;
    case PeerFault::timed_out:
      cause = who + " did not take part within the timeout";
      note = peer ? "stuck, or dead with its connection open" : "stuck or dead; the backend does not say which rank";
      break;
    case PeerFault::unknown:
      cause = "a rank dead, missing or stuck?";
      break;
  }
  std::ostringstream o;
  o << where << ": " << op << " failed: " << cause << " (" << (note.empty() ? "" : note + "; ") << "timeout "
    << timeout_s << " s): " << backend_words(backend_message);
  return o.str();
}

DistFailure collective_failure(const std::string& where, int rank, int world, const std::string& op, double timeout_s,
                               const std::string& backend_message) {
  const PeerFault fault = classify_peer_fault(backend_message);
  return DistFailure(collective_failure_message(where, rank, world, op, timeout_s, backend_message),
                     fault == PeerFault::unknown ? std::nullopt : failed_peer_rank(rank, world), fault);
}

}  // namespace gaugelab::gpt2

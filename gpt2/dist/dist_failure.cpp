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

std::vector<int> lost_ranks(int rank, int world, const RollCall& roll) {
  if (const std::optional<int> peer = failed_peer_rank(rank, world)) return {*peer};
  if (!roll.held) return {};
  if (roll.store_lost) return {0};
  return roll.missing;
}

namespace {

/// How a failed collective is read: its fault, and whether the roll call left it open which rank is gone (several
/// did not answer: a connection closes only to a rank that is gone, so another may be alive and busy between
/// collectives; or every rank answered: one was late but alive, or the error was this rank's own). A closed
/// connection is read as timed_out (a rank named may be alive) when it is left open or a rank that answered timed out.
struct Reading {
  PeerFault fault;
  bool undecided;
};

Reading read_failure(const std::string& backend_message, const RollCall& roll) {
  const PeerFault own = classify_peer_fault(backend_message);
  const bool undecided = own == PeerFault::closed && !roll.peer_timed_out && roll.held && !roll.store_lost &&
                         roll.missing.size() != 1;
  if (own == PeerFault::closed && (roll.peer_timed_out || undecided)) return {PeerFault::timed_out, undecided};
  return {own, false};
}

}  // namespace

PeerFault collective_fault(const std::string& backend_message, const RollCall& roll) {
  return read_failure(backend_message, roll).fault;
}

namespace {

/// "rank 2", "ranks 1 and 2", "ranks 1, 2 and 3".
std::string rank_list(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    s += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  return s;
}

}  // namespace

std::string seconds_words(double s) {
  std::ostringstream o;
  o << s << " s";
  return o.str();
}

std::string collective_failure_message(const std::string& where, int rank, int world, const std::string& op,
                                       double timeout_s, const std::string& backend_message, const RollCall& roll) {
  const bool by_peer = failed_peer_rank(rank, world).has_value();  // 2 ranks: the other one, without a roll call
  const std::vector<int> lost = lost_ranks(rank, world, roll);
  const bool several = lost.size() > 1;
  const std::string who = lost.empty() ? std::string("a rank") : rank_list(lost);
  // What the roll call says about the ranks it names.
  std::string heard;
  if (!by_peer && roll.held && roll.store_lost) heard = "the rendezvous store it serves does not answer";
  else if (!by_peer && !lost.empty())
    heard = std::string(several ? "they" : "it") + " did not answer at the rendezvous store within " +
            seconds_words(roll.window_s);
  std::string cause, note;  // what happened; what qualifies it, inside the parentheses before the timeout
  const Reading reading = read_failure(backend_message, roll);
  if (reading.undecided) {
    cause = lost.empty() ? std::string("a connection closed, yet every rank answered at the rendezvous store")
                         : who + " did not answer: gone, or alive and busy between collectives";
    note = lost.empty() ? "a rank late but alive, or an error of this rank's own"
                        : "a connection closed, and " + heard + "; any that lives must be stopped";
  } else switch (reading.fault) {
    case PeerFault::closed:
      cause = who + (several ? " are gone" : " is gone");
      note = by_peer          ? "its connection closed"
             : !heard.empty() ? "a connection closed, and " + heard
                              : "a connection closed; the backend names the peer by address, not by rank";
      break;
    case PeerFault::timed_out:
      cause = who + " did not take part within the timeout";
      note = by_peer          ? "stuck, or dead with its connection open"
             : !heard.empty() ? std::string(several ? "stuck, or dead with their connections open; "
                                                    : "stuck, or dead with its connection open; ") + heard
                              : "stuck or dead; the backend does not say which rank";
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
                               const std::string& backend_message, const RollCall& roll) {
  const PeerFault fault = collective_fault(backend_message, roll);
  return DistFailure(collective_failure_message(where, rank, world, op, timeout_s, backend_message, roll),
                     fault == PeerFault::unknown ? std::vector<int>{} : lost_ranks(rank, world, roll), fault);
}

}  // namespace gaugelab::gpt2

// A collective that failed because a rank is gone or late, said in one line: this rank, the collective,
// the rank that failed it, and the backend's own words. No c10d here: the trainer catches DistFailure to
// add how to continue; roll_call.hpp asks the rendezvous store which ranks are still there.
#pragma once

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gaugelab::gpt2 {

/// What the backend's message says happened to a peer.
enum class PeerFault {
  closed,     // the peer's connection closed or was reset: its process is gone
  timed_out,  // the peer did not take part within the timeout: stuck, or dead with its connection open
  unknown,    // anything else
};

/// Reads Gloo's message: "Connection closed by peer [addr]:port", "Read error [addr]:port: Connection reset by
/// peer" and "Write error ...: Broken pipe" mean the peer's process is gone; "Timed out waiting Nms for recv
/// operation to complete" means the peer did not take part in time.
PeerFault classify_peer_fault(const std::string& backend_message);

/// A duration as the lines say it: "3 s", "0.5 s", "600 s".
std::string seconds_words(double s);

/// The rank that failed a collective, when the backend's message is enough to know it: with 2 ranks the
/// only peer, the other one. Gloo names a peer by address and port only, and with more ranks those do not
/// identify a rank (on one host every rank has the same address, and a connection's port may be the peer's
/// ephemeral one), so for world > 2 the answer is none: the roll call below says it.
std::optional<int> failed_peer_rank(int rank, int world);

/// What the survivors of a failed collective learned at the rendezvous store (roll_call.hpp): each writes
/// its rank there and reads the others' within a window; a rank that never writes is gone or stuck.
struct RollCall {
  bool held = false;            // the roll call took place (world > 2 under Gloo)
  double window_s = 0;          // how long each rank waited for the others
  std::vector<int> missing;     // the ranks that did not answer within the window, ascending
  bool store_lost = false;      // the store did not answer: rank 0, which serves it, is the one lost
  bool peer_timed_out = false;  // a rank that answered saw its collective time out (a missing one may live)
};

/// The longest a roll call waits for the others' answers: a dead rank's answer never comes, so every
/// survivor waits this long before its line (rank 0 up to twice, see roll_call).
inline constexpr double kRollCallMaxS = 3;

/// The roll call's window for a collective timeout: half of it, at most kRollCallMaxS. The survivors
/// arrive within milliseconds of each other when each has closed its connections first (data_parallel.cpp),
/// so the window only has to cover a loaded machine's scheduling, not the timeout.
inline double roll_call_window_s(double timeout_s) { return std::min(timeout_s / 2, kRollCallMaxS); }

/// The ranks that failed a collective: the other one of 2; rank 0 when the store it serves is lost; else
/// the roll call's missing ranks (none when no roll call was held or every rank answered).
std::vector<int> lost_ranks(int rank, int world, const RollCall& roll);

/// The fault a failed collective is reported as: the backend's message read by classify_peer_fault, made
/// timed_out (a rank it names may be alive: the hint asks to stop every rank first) when a rank that answered the
/// roll call timed out (the rank it waited for may be alive), when several ranks did not answer (a closed connection
/// says one is gone; another may be busy between collectives) or when every rank answered.
PeerFault collective_fault(const std::string& backend_message, const RollCall& roll);

/// The one-line message of a failed collective `op` on rank `rank` of `world` (`where` prefixes it:
/// "data parallel (gloo, rank 0/2)"), from the backend's first message line and the roll call:
///   "<where>: gradient all-reduce failed: rank 1 is gone (its connection closed; timeout 5 s): Connection
///    closed by peer [127.0.0.1]:41234"
///   "<where>: gradient all-reduce failed: rank 2 is gone (a connection closed, and it did not answer at the
///    rendezvous store within 2.5 s; timeout 5 s): Connection closed by peer [127.0.0.1]:41234"
/// (the backend's words without Gloo's source location and c10d's appended advice).
std::string collective_failure_message(const std::string& where, int rank, int world, const std::string& op,
                                       double timeout_s, const std::string& backend_message,
                                       const RollCall& roll = {});

/// A collective that failed on this rank. what() is collective_failure_message's line (a caller may
/// append to it); lost_ranks() is lost_ranks's answer when a peer is gone or late, lost_rank() the one
/// rank when exactly one is named.
class DistFailure : public std::runtime_error {
 public:
  DistFailure(const std::string& message, std::vector<int> lost_ranks, PeerFault fault)
      : std::runtime_error(message), lost_ranks_(std::move(lost_ranks)), fault_(fault) {}
  const std::vector<int>& lost_ranks() const { return lost_ranks_; }
  std::optional<int> lost_rank() const {
    return lost_ranks_.size() == 1 ? std::optional<int>(lost_ranks_.front()) : std::nullopt;
  }
  PeerFault fault() const { return fault_; }

 private:
  std::vector<int> lost_ranks_;
  PeerFault fault_;
};

/// The DistFailure of a failed collective (its message as above).
DistFailure collective_failure(const std::string& where, int rank, int world, const std::string& op, double timeout_s,
                               const std::string& backend_message, const RollCall& roll = {});

}  // namespace gaugelab::gpt2

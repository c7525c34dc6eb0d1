// A collective that failed because a rank is gone or late, said in one line: this rank, the collective,
// the rank that failed it, and the backend's own words. No c10d here: the trainer catches DistFailure to
// add how to continue.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

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

/// The rank that failed a collective, when this rank can know it: with 2 ranks the only peer, the other
/// one. Gloo names a peer by address and port only, and with more ranks those do not identify a rank (on
/// one host every rank has the same address, and a connection's port may be the peer's ephemeral one), so
/// for world > 2 the answer is none.
std::optional<int> failed_peer_rank(int rank, int world);

/// The one-line message of a failed collective `op` on rank `rank` of `world` (`where` prefixes it:
/// "data parallel (gloo, rank 0/2)"), from the backend's first message line:
///   "<where>: gradient all-reduce failed: rank 1 is gone (its connection closed; timeout 5 s): Connection
///    closed by peer [127.0.0.1]:41234"
/// (the backend's words without Gloo's source location and c10d's appended advice).
std::string collective_failure_message(const std::string& where, int rank, int world, const std::string& op,
                                       double timeout_s, const std::string& backend_message);

/// A collective that failed on this rank. what() is collective_failure_message's line (a caller may
/// append to it); lost_rank() is failed_peer_rank's answer when the peer is gone or late.
class DistFailure : public std::runtime_error {
 public:
  DistFailure(const std::string& message, std::optional<int> lost_rank, PeerFault fault)
      : std::runtime_error(message), lost_rank_(lost_rank), fault_(fault) {}
  std::optional<int> lost_rank() const { return lost_rank_; }
  PeerFault fault() const { return fault_; }

 private:
  std::optional<int> lost_rank_;
  PeerFault fault_;
};

/// The DistFailure of a failed collective (its message as above).
DistFailure collective_failure(const std::string& where, int rank, int world, const std::string& op, double timeout_s,
                               const std::string& backend_message);

}  // namespace gaugelab::gpt2

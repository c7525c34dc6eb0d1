// After a collective failed, which ranks are still there, asked at the rendezvous store (c10d's TCPStore,
// served by rank 0) rather than read from the backend: Gloo names a peer by address and port only, and
// on one host those do not identify a rank. Only data_parallel.cpp includes this header.
#pragma once

#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "gpt2/dist/dist_failure.hpp"

namespace gaugelab::gpt2 {

/// Rank `rank` of `world` answers the roll call and hears the others: it sets "gaugelab/roll/<rank>" to the
/// fault it saw (its word: closed, timed_out, unknown), then polls every rank's key until all are there or
/// `window_s` (roll_call_window_s, dist_failure.hpp) has passed; the ranks whose keys never came are
/// `missing`. A store that fails to answer (an exception from any call) on a rank other than 0 before rank 0's
/// own key came means rank 0, its host, is gone: `store_lost`; after it came, the roll as heard stands. Rank 0
/// then stays until every rank that answered has said it is done ("gaugelab/done/<rank>"), at most one window
/// and 250 ms after the last answer it saw (a rank polls one window from its own answer), so that no survivor
/// finds the store gone because rank 0 left first. The whole call is bounded by twice the window and 1.5 s
/// (the store's calls run on a thread of their own; TCPStore's timeout bounds its get and wait, not its set and
/// check): a store host that is stopped, not dead, holds a call's reply forever; the answer is then store_lost
/// too, and the thread is left behind, holding its own reference to the store. A process group holds one roll call at most
/// (its keys are not reused). A survivor that is computing when the others fail answers only at its next
/// collective: if that comes after the window, it is named as missing too.
RollCall roll_call(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world, PeerFault own, double window_s);

}  // namespace gaugelab::gpt2

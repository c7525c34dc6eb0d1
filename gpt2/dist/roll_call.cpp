// The roll call at the rendezvous store after a failed collective (roll_call.hpp).
#include "gpt2/dist/roll_call.hpp"

#include <cmath>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gaugelab::gpt2 {

namespace {

const char* fault_word(PeerFault f) {
  switch (f) {
    case PeerFault::closed: return "closed";
    case PeerFault::timed_out: return "timed_out";
    case PeerFault::unknown: break;
  }
  return "unknown";
}

std::string roll_key(int rank) { return "gaugelab/roll/" + std::to_string(rank); }
std::string done_key(int rank) { return "gaugelab/done/" + std::to_string(rank); }

/// Polls `keys` (those not yet seen) until all are seen or `deadline`; `seen[i]` says which came. Returns when
/// the last key it saw came (`since` if none).
template <class Clock>
typename Clock::time_point poll(c10d::Store& store, const std::vector<std::string>& keys, std::vector<bool>& seen,
                                typename Clock::time_point since, typename Clock::time_point deadline) {
  typename Clock::time_point last = since;
  for (;;) {
    bool all = true;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!seen[i] && store.check({keys[i]})) {
        seen[i] = true;
        last = Clock::now();
      }
      all = all && seen[i];
    }
    if (all || Clock::now() >= deadline) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

RollCall call(c10d::Store& store, int rank, int world, PeerFault own, double window_s) {
  using Clock = std::chrono::steady_clock;
  const auto window = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(window_s * 1000.0)));
  RollCall roll;
  roll.held = true;
  roll.window_s = window_s;
  std::vector<std::string> keys;
  for (int r = 0; r < world; ++r) keys.push_back(roll_key(r));
  std::vector<bool> answered(static_cast<std::size_t>(world), false);
  answered[static_cast<std::size_t>(rank)] = true;
  const auto start = Clock::now();
  auto last_answer = start;
  try {
    store.setTimeout(window);  // bounds get and wait; set and check are bounded by roll_call's thread alone
    store.set(roll_key(rank), std::string(fault_word(own)));
    last_answer = poll<Clock>(store, keys, answered, start, start + window);
    for (int r = 0; r < world; ++r)
      if (answered[static_cast<std::size_t>(r)] && r != rank &&
          store.get_to_str(roll_key(r)) == fault_word(PeerFault::timed_out))
        roll.peer_timed_out = true;
  } catch (const std::exception&) {
    if (rank == 0) return RollCall{};  // its own store failing says nothing about the others
    if (!answered[0]) {  // rank 0 never answered and its store is gone: it is the one lost
      roll.store_lost = true;
      return roll;
    }
    // rank 0 answered, then closed its store (its wait for this rank ran out): the roll as heard stands
  }
  for (int r = 0; r < world; ++r)
    if (!answered[static_cast<std::size_t>(r)]) roll.missing.push_back(r);
  try {
    if (rank != 0) {
      store.set(done_key(rank), std::string("1"));
    } else {
      // The store's host stays until every rank that answered has heard the roll: a rank that answered at time t
      // polls until t + window at most, so rank 0 waits for its done key that long after the last answer it saw.
      std::vector<std::string> done;
      for (int r = 1; r < world; ++r)
        if (answered[static_cast<std::size_t>(r)]) done.push_back(done_key(r));
      std::vector<bool> seen(done.size(), false);
      poll<Clock>(store, done, seen, start, last_answer + window + std::chrono::milliseconds(250));
    }
  } catch (const std::exception&) {
    // the roll is heard; a failure to say so changes nothing in it
  }
  return roll;
}

}  // namespace

RollCall roll_call(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world, PeerFault own, double window_s) {
  auto task = std::make_shared<std::packaged_task<RollCall()>>(
      [store, rank, world, own, window_s] { return call(*store, rank, world, own, window_s); });
  std::future<RollCall> answer = task->get_future();
  std::thread([task] { (*task)(); }).detach();  // left behind only when a stopped store host holds a reply
  // rank 0: its poll (one window), then the done keys until one window and 250 ms after the last answer
  const auto bound = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil((2 * window_s + 1.5) * 1000.0)));
  if (answer.wait_for(bound) == std::future_status::ready) return answer.get();
  RollCall roll;
  if (rank == 0) return roll;
  roll.held = true;
  roll.window_s = window_s;
  roll.store_lost = true;
  return roll;
}

}  // namespace gaugelab::gpt2

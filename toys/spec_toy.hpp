// A toy from a declaration: its options struct and one ToySpec (name, summary, seed count, run, summary
// of the seeds), instead of a hand-written Toy class per toy. The relu toy keeps its own class (it
// streams its series while it runs); every other toy is make_spec_toy(ToySpec<ItsOptions>{...}).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "toys/toy.hpp"

namespace gaugelab::toys {

using ToySummary = std::vector<std::pair<std::string, io::Cell>>;

template <class Opts>
struct ToySpec {
  std::string name;     // `gaugelab toy NAME`
  std::string summary;  // first line of --help
  std::function<int(const Opts&)> seeds;                  // seeds per configuration; empty: deterministic (1)
  std::function<ToyRun(const Opts&, std::uint64_t)> run;  // one seed
  std::function<ToySummary(const std::vector<ToyRun>&)> summarize;  // empty: the (one) run's own metrics
};

/// The usual summary over seeds: "<m>_mean" for each of `means`, then "<m><worst_suffix>" = the largest
/// value over the seeds for each of `worst` (error bounds and spreads: the worst seed is the claim).
inline ToySummary means_and_worst(const std::vector<ToyRun>& runs, std::initializer_list<const char*> means,
                                  std::initializer_list<const char*> worst, const std::string& worst_suffix = "") {
  ToySummary s;
  for (const char* m : means) s.emplace_back(std::string(m) + "_mean", mean_std(runs, m).mean);
  for (const char* m : worst) {
    double w = 0;
    for (const auto& r : runs) w = std::max(w, r.metric(m));
    s.emplace_back(std::string(m) + worst_suffix, w);
  }
  return s;
}

namespace detail {
// Unqualified, so the toy's own declare(io::Options&, ItsOptions&) is found by argument-dependent lookup.
template <class Opts>
void declare_toy_options(io::Options& opts, Opts& o) {
  declare(opts, o);
}
}  // namespace detail

template <class Opts>
class SpecToy final : public Toy {
 public:
  explicit SpecToy(ToySpec<Opts> s) : s_(std::move(s)) {}
  std::string name() const override { return s_.name; }
  std::string summary() const override { return s_.summary; }
  void declare(io::Options& opts) override { detail::declare_toy_options(opts, o_); }
  int seeds() const override { return s_.seeds ? s_.seeds(o_) : 1; }
  ToyRun run(std::uint64_t seed) const override { return s_.run(o_, seed); }
  ToySummary summarize(const std::vector<ToyRun>& runs) const override {
    return s_.summarize ? s_.summarize(runs) : runs.front().metrics;
  }

 private:
  ToySpec<Opts> s_;
  Opts o_;
};

template <class Opts>
std::unique_ptr<Toy> make_spec_toy(ToySpec<Opts> spec) {
  return std::make_unique<SpecToy<Opts>>(std::move(spec));
}

}  // namespace gaugelab::toys

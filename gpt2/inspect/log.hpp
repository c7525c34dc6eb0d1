// The HDF5 log of `gaugelab inspect` (schema in inspect_api.hpp) and its one-screen summary.
// Rows go out as each table is computed; arrays, percentiles and /summary at finish().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/permutation.hpp"
#include "gpt2/inspect/api.hpp"
#include "gpt2/inspect/checks.hpp"
#include "io/run_log.hpp"

namespace gaugelab::gpt2::inspect {

struct LogShape {
  std::int64_t layers = 0, heads = 0, d_k = 0, d_v = 0;
  std::int64_t valid_tests = 0, invalid_tests = 0;
  bool lrm = false;  // Q and K carry row/scalar multipliers: /heads/s_q, /heads/s_k are declared
};

class InspectLog {
 public:
  InspectLog(const std::string& path, const io::Provenance& prov, bool force, LogShape shape);

  void projections(std::int64_t layer, const std::vector<HeadSpectra>& heads);  // Table 3
  void bilinear(std::int64_t layer, const BilinearRank& r);                     // Table 4
  void valid(std::int64_t test, const TransformErrors& e);                      // Tables 5–6
  void invalid(InvalidFamily f, std::int64_t draw, const TransformErrors& e);   // Table 7
  /// Table 8: `before` per original head, `after` per canonical position j (= original head perm[j]),
  /// both on the held-out half of the sample; `after_fit` the moved model on the half the slice was fitted on.
  void canonical(Slice s, std::int64_t layer, const core::Permutation& perm, const std::vector<HeadMetrics>& before,
                 const std::vector<HeadMetrics>& after, const std::vector<HeadMetrics>& after_fit);
  void exactness(Slice s, const InspectOptions& o, const Exactness& e);          // Table 9
  void lrm(std::int64_t layer, const std::vector<LrmHeadStats>& heads);         // seed 000 scales

  /// Writes the arrays, /tables/valid_distribution and /summary, closes, prints the summary.
  InspectResult finish(const GaugeCounts& counts, std::int64_t parameters, const InspectOptions& o, double seconds);

 private:
  io::RunLog log_;
  LogShape shape_;
  std::vector<double> valid_score_, valid_attn_, valid_logit_;  // row-major [tests, layers], [tests]
  std::vector<double> invalid_score_, invalid_attn_, invalid_logit_;  // [3, n, layers], [3, n]
  std::vector<HeadSpectra> spectra_;                             // every (layer, head)
  std::vector<BilinearRank> bilinear_;
  struct SliceSums {
    double v_before = 0, v_after = 0, cov_before = 0, cov_after = 0, gram_before = 0, gram_after = 0;
    double kq_before = 0, kq_after = 0, kk_before = 0, kk_after = 0;
    std::int64_t n = 0;
    Exactness exact;
  };
  std::vector<SliceSums> slices_ = std::vector<SliceSums>(3);
  std::vector<LrmHeadStats> lrm_;
};

}  // namespace gaugelab::gpt2::inspect

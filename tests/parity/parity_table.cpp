// The whole table: the rows of every topic, in one list.
#include "tests/parity/parity_table.hpp"

namespace gaugelab::parity {

const std::vector<ParityRow>& parity_rows() {
  static const std::vector<ParityRow> rows = [] {
    using Topic = std::vector<ParityRow> (*)();
    const Topic topics[] = {&gauge_rows, &gaugefix_rows, &projection_rows, &quotient_rows, &optimizer_rows, &qk_clip_rows,
                            &qk_balance_rows, &kernel_rows, &lrm_kernel_rows};
    std::vector<ParityRow> all;
    for (const Topic topic : topics) {
      std::vector<ParityRow> part = topic();
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }();
  return rows;
}

}  // namespace gaugelab::parity

// Optimizer-state transport under an explicit gauge move (DESIGN §3, seed 003 §7: "Optimizer state
// must transform with any explicit gauge move").
//
// A gauge move acts on one matrix parameter W either on the right, W → W·S (a factor's columns:
// A → AS, B → B·S⁻ᵀ, W_Q, W_K, W_V), or on the left, W → S⁻¹·W (W_O in (W_V T, T⁻¹W_O)). The state's
// first moment m (momentum buffer, Adam m, Muon buffer) can move
//   none      unchanged;
//   vector    like the weights:   right m → m·S,      left m → S⁻¹·m;
//   covector  like the gradients: right m → m·S⁻ᵀ,    left m → Sᵀ·m
//             (if W' = W·S then ∇_{W'} = ∇_W·S⁻ᵀ; if W' = S⁻¹W then ∇_{W'} = Sᵀ·∇_W).
// Which one is right depends on what the buffer accumulates: a buffer of raw gradients (torch SGD
// momentum, Adam m, Muon) is a covector; a buffer of quotient-corrected increments (opposite-Gram
// corrected gradients, which move like weights) is a vector. The seed's "first moments transform
// like weights" is the second case; the tests check both, each against the wrong choice.
//
// The elementwise second moment v (Adam) only has a consistent transport under a diagonal gauge
// S = diag(s): v moves with the squared scale of the matching first-moment law — right vector
// v₍:,j₎·s_j², right covector v₍:,j₎·s_j⁻², left vector v₍i,:₎·s_i⁻², left covector v₍i,:₎·s_i².
// For a non-diagonal S (exactly zero off-diagonal required to count as diagonal) no elementwise v
// reproduces the moved gradient statistics (seed 003 §7: "Full gauges interact poorly with
// elementwise adaptive state"): the transport throws std::invalid_argument unless
// `keep_second_moment_for_general_gauge` is set, in which case v is left untouched (an explicit,
// documented approximation). The step counter and the Hyperball radius are never changed.
#pragma once

#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/transport_mode.hpp"
#include "core/update_step.hpp"

namespace gaugelab::core {

/// Parses a word of transport_mode_choices(); throws std::invalid_argument naming the value and the words.
inline TransportMode parse_transport_mode(std::string_view s) {
  const ChoiceTable<TransportMode>& t = transport_mode_choices();
  const std::size_t i = choice_index(t, s);
  if (i < t.size()) return t[i].value;
  std::string words;
  for (const std::string& w : choice_words(t)) words += (words.empty() ? "" : "|") + w;
  throw std::invalid_argument("unknown transport mode '" + std::string(s) + "' (expected " + words + ")");
}

inline std::string_view transport_mode_name(TransportMode m) { return choice_name(transport_mode_choices(), m); }

/// Which side the gauge acts on: right W → W·S, left W → S⁻¹·W.
enum class GaugeSide { right, left };

struct TransportOptions {
  TransportMode mode = TransportMode::none;  // how first (and, for diagonal S, second) moments move
  bool keep_second_moment_for_general_gauge = false;  // false: a non-diagonal S with a second moment throws;
                                                      // true: v is left untouched in that case
};

namespace transport_detail {

template <class T>
bool is_diagonal(const Mat<T>& S) {
  for (Index j = 0; j < S.cols(); ++j)
    for (Index i = 0; i < S.rows(); ++i)
      if (i != j && S(i, j) != T(0)) return false;
  return true;
}

}  // namespace transport_detail

/// Moves the state of W [m, n] along the gauge move given by S ([n, n] for right, [m, m] for left).
template <class T>
void transport_state(RuleState<T>& st, const Mat<T>& S, GaugeSide side, const TransportOptions& o) {
  if (o.mode == TransportMode::none) return;
  const bool has_m = st.moment1.size() != 0, has_v = st.moment2.size() != 0;
  if (!has_m && !has_v) return;
  const Mat<T>& ref = has_m ? st.moment1 : st.moment2;
  const Index k = side == GaugeSide::right ? ref.cols() : ref.rows();
  if (S.rows() != k || S.cols() != k)
    throw std::invalid_argument("transport_state: gauge is " + std::to_string(S.rows()) + "x" + std::to_string(S.cols()) +
                                " but the state needs " + std::to_string(k) + "x" + std::to_string(k) + " (" +
                                (side == GaugeSide::right ? "right action on columns" : "left action on rows") + ")");
  if (has_m && has_v && (st.moment1.rows() != st.moment2.rows() || st.moment1.cols() != st.moment2.cols()))
    throw std::invalid_argument("transport_state: first and second moments have different shapes");
  const bool diagonal = transport_detail::is_diagonal(S);
  if (has_v && !diagonal && !o.keep_second_moment_for_general_gauge)
    throw std::invalid_argument(
        "transport_state: second moments can only be transported under a diagonal gauge; this gauge is not "
        "diagonal (set keep_second_moment_for_general_gauge to leave v untouched)");
  Eigen::PartialPivLU<Mat<T>> lu(S);
  if (!(lu.rcond() > std::numeric_limits<T>::epsilon()))
    throw std::invalid_argument("transport_state: gauge is singular to working precision");
  const bool vec = o.mode == TransportMode::vector;
  if (has_m) {
    Mat<T>& m = st.moment1;
    if (side == GaugeSide::right)
      m = vec ? Mat<T>(m * S) : Mat<T>(lu.solve(m.transpose()).transpose());  // m·S or m·S⁻ᵀ
    else
      m = vec ? Mat<T>(lu.solve(m)) : Mat<T>(S.transpose() * m);  // S⁻¹·m or Sᵀ·m
  }
  if (has_v && diagonal) {
    const Vec<T> s2 = S.diagonal().cwiseAbs2();  // [k]
    // Exponent of s on v: +2 when the moved quantity scales like s, −2 when like 1/s.
    const bool grows = (side == GaugeSide::right) == vec;  // right-vector and left-covector scale by s
    const Vec<T> f = grows ? s2 : Vec<T>(s2.cwiseInverse());
    if (side == GaugeSide::right)
      st.moment2 = st.moment2 * f.asDiagonal();
    else
      st.moment2 = f.asDiagonal() * st.moment2;
  }
}

/// Transport for a factor pair under (A, B) → (AS, BS⁻ᵀ): right action by S on A's state and by
/// S⁻ᵀ on B's state. B's move by S⁻ᵀ is carried out with S itself and the roles swapped (vector on B:
/// m_B·S⁻ᵀ, the covector formula for S; covector on B: m_B·S, the vector formula for S), so S is never
/// inverted twice.
template <class T>
void transport_pair_state(RuleState<T>& state_a, RuleState<T>& state_b, const Mat<T>& S /*[r, r]*/,
                          const TransportOptions& o) {
  transport_state(state_a, S, GaugeSide::right, o);
  TransportOptions swapped = o;
  if (o.mode == TransportMode::vector) swapped.mode = TransportMode::covector;
  else if (o.mode == TransportMode::covector) swapped.mode = TransportMode::vector;
  transport_state(state_b, S, GaugeSide::right, swapped);
}

}  // namespace gaugelab::core

// The small helpers the landscape verbs' logs share: table column constructors.
#pragma once

#include "io/run_log_types.hpp"

namespace gaugelab::gpt2::landscape_log {

inline io::Column f(const char* n) { return {n, io::DType::f64}; }    // float64 column
inline io::Column i(const char* n) { return {n, io::DType::i64}; }    // int64 column
inline io::Column s(const char* n) { return {n, io::DType::str, 16}; }  // short string column

}  // namespace gaugelab::gpt2::landscape_log

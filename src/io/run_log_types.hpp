// Value types shared by the run log writer (run_log.hpp) and reader (run_log_reader.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace gaugelab::io {

/// Element type of a table column or array.
enum class DType { f64, i64, str };

/// One column of a /tables/<table> group.
struct Column {
  std::string name;
  DType type = DType::f64;
  std::size_t width = 32;  // str only: bytes per value (fixed-length, null-padded UTF-8); longer values are refused
};

/// One table cell, a /summary value, or a value read back from either.
using Cell = std::variant<double, std::int64_t, std::string>;
/// One table row, cells in declared column order.
using Row = std::vector<Cell>;

/// Name of a DType as used in messages ("f64", "i64", "str").
inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::f64: return "f64";
    case DType::i64: return "i64";
    case DType::str: return "str";
  }
  return "?";
}

}  // namespace gaugelab::io

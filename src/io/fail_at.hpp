// The readers' one-line error: "WHERE: WHAT" (a file, a key, a tensor name), thrown as std::runtime_error.
#pragma once

#include <stdexcept>
#include <string>

namespace gaugelab::io {

[[noreturn]] inline void fail_at(const std::string& where, const std::string& msg) {
  throw std::runtime_error(where + ": " + msg);
}

}  // namespace gaugelab::io

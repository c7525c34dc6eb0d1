// Catch2 for the GPT-2 tests. LibTorch's c10 logging header defines a glog-style CHECK macro that
// replaces Catch's (a failing CHECK would abort the run instead of being reported), so every test
// file includes its LibTorch headers first and this header last, which puts Catch's CHECK back.
#pragma once

#ifdef CHECK
#undef CHECK
#endif
#include <catch2/catch.hpp>

// Catch2 for the GPT-2 tests. LibTorch's c10 logging header defines a glog-style CHECK macro that
// replaces Catch's (a failing CHECK would abort the run instead of being reported), so every test
// file includes its LibTorch headers first and this header last, which puts Catch's CHECK back.
// No include guard: in a unity batch (tests/CMakeLists.txt) a later file's LibTorch headers can take CHECK
// again after Catch2's header was read, so each file's inclusion restores it.
#ifdef CHECK
#undef CHECK
#endif
#include <catch2/catch.hpp>
#ifndef CHECK  // Catch2's header was read earlier in this unit: its definition of CHECK, restated
#define CHECK(...) INTERNAL_CATCH_TEST("CHECK", Catch::ResultDisposition::ContinueOnFailure, __VA_ARGS__)
#endif

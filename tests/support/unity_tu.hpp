// The name of this translation unit's own namespace. Each test file of a unity-built area (tests/CMakeLists.txt,
// GAUGELAB_TEST_UNITY) wraps its helpers and cases in `namespace GAUGELAB_TU { ... }`: CMake defines GAUGELAB_TU
// to a value unique to each file inside the batch it compiles as one unit (UNITY_BUILD_UNIQUE_ID), so two
// files' kPoints or point() never meet (a macro is not held by a namespace: tests/CMakeLists.txt refuses a
// #define in these files). Compiled alone (GAUGELAB_TEST_UNITY=OFF, or a file left out of its batch), a file gets
// this fixed name instead. No include guard: in a unity batch CMake redefines the name before each file.
#ifndef GAUGELAB_TU
#define GAUGELAB_TU gaugelab_test_tu
#endif

// The Gloo route's safety condition (gpt2/dist/data_parallel.cpp, gpt2/README.md "Data parallelism"):
// our object file takes only declarations from Debian's Gloo headers. Any Gloo code or vtable it
// emitted itself (weak symbols in namespace gloo, or of ProcessGroupGloo::GlooStore, whose layout
// differs between Debian's Gloo and the wheel's) would be linked into our executables and could
// interpose libtorch_cpu.so's own copy. This test reads the built archive with nm and finds none.
#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

namespace {

/// The defined symbols (nm -C --defined-only) of archive member `member` of `archive`.
std::vector<std::string> defined_symbols(const std::string& archive, const std::string& member) {
  const std::string cmd = "nm -C --defined-only '" + archive + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::vector<std::string> out;
  if (!p) return out;
  std::array<char, 4096> buf{};
  bool in_member = false;
  while (fgets(buf.data(), buf.size(), p.get())) {
    std::string line(buf.data());
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (!line.empty() && line.back() == ':') {  // "member.o:" starts a member's listing
      in_member = line == member + ":";
      continue;
    }
    if (in_member && !line.empty()) out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("the Gloo route emits no Gloo code of its own", "[dist][abi][alone]") {
#if !__has_include(<gloo/algorithm.h>)
  WARN("SKIPPED: no Gloo headers in this build (libgloo-dev): DataParallel has no Gloo backend");
  return;
#endif
  const std::string archive = std::string(GAUGELAB_BINARY_DIR) + "/gpt2/libgaugegpt2.a";
  const auto syms = defined_symbols(archive, "data_parallel.cpp.o");
  REQUIRE(!syms.empty());  // the member is there and nm ran
  std::vector<std::string> offending;
  for (const auto& s : syms)
    if (s.find("gloo::") != std::string::npos ||  // any Gloo class's code, incl. templates over one
        s.find("GlooStore") != std::string::npos || s.find("vtable for c10d::ProcessGroupGloo") != std::string::npos)
      offending.push_back(s);
  INFO("offending symbols: " << offending.size() << (offending.empty() ? "" : " e.g. " + offending.front()));
  CHECK(offending.empty());
}

}  // namespace GAUGELAB_TU

// The safetensors reader on hand-built good and malformed files: every bad file is one
// std::runtime_error line naming the file (and the tensor), never a crash.
#include <cstring>
#include <random>
#include <string>

#include "gpt2/model/safetensors.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

namespace st = gaugelab::gpt2::safetensors;
using Bytes = std::vector<std::uint8_t>;

namespace {

// A file image from a literal header and `data_len` data bytes (value i at byte i).
Bytes image(const std::string& header, std::size_t data_len, std::uint64_t claimed_len = UINT64_MAX) {
  const std::uint64_t n = claimed_len == UINT64_MAX ? header.size() : claimed_len;
  Bytes out;
  out.reserve(8 + header.size() + data_len);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  for (char ch : header) out.push_back(static_cast<std::uint8_t>(ch));
  for (std::size_t i = 0; i < data_len; ++i) out.push_back(static_cast<std::uint8_t>(i));
  return out;
}

st::File parse(const Bytes& b) { return st::parse(std::make_shared<const Bytes>(b), "test.safetensors"); }

// The parse error's message (empty if the file parsed).
std::string error_of(const Bytes& b) {
  try {
    parse(b);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

const std::string kGood =
    R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]},)"
    R"("__metadata__":{"format":"pt"}})";

}  // namespace

TEST_CASE("safetensors: a well-formed file parses with views into the buffer", "[gpt2][safetensors]") {
  const st::File f = parse(image(kGood, 32));
  REQUIRE(f.tensors.size() == 2);
  const st::TensorView& a = f.at("a");
  CHECK(a.dtype == st::DType::F32);
  CHECK(a.shape == std::vector<std::int64_t>{2, 3});
  CHECK(a.nbytes == 24);
  CHECK(a.data[5] == 5);
  CHECK(f.at("b").dtype == st::DType::BF16);
  CHECK(f.at("b").data[0] == 24);
  CHECK(f.metadata.at("format") == "pt");
  CHECK_THROWS_WITH(f.at("c"), Catch::Contains("test.safetensors") && Catch::Contains("'c' is missing"));
}

TEST_CASE("safetensors: serialize and parse round-trip, data 8-byte aligned", "[gpt2][safetensors]") {
  std::vector<st::TensorData> ts = {{"w", st::DType::F32, {2, 2}, Bytes(16, 7)},
                                    {"h", st::DType::F16, {3}, Bytes{1, 2, 3, 4, 5, 6}},
                                    {"empty", st::DType::F32, {0, 5}, {}}};
  const Bytes img = st::serialize(ts, {{"k", "v"}});
  std::uint64_t n = 0;
  std::memcpy(&n, img.data(), 8);
  CHECK((8 + n) % 8 == 0);
  const st::File f = parse(img);
  CHECK(f.tensors.size() == 3);
  CHECK(f.at("h").data[5] == 6);
  CHECK(f.at("empty").numel() == 0);
  CHECK(f.metadata.at("k") == "v");
  CHECK_THROWS(st::serialize({{"x", st::DType::F32, {3}, Bytes(8)}}));  // 3 floats need 12 bytes
  CHECK_THROWS(st::serialize({{"x", st::DType::F32, {1}, Bytes(4)}, {"x", st::DType::F32, {1}, Bytes(4)}}));
}

TEST_CASE("safetensors: malformed files are one-line errors naming the problem", "[gpt2][safetensors]") {
  struct Case {
    const char* label;
    Bytes bytes;
    const char* expect;  // a fragment of the message
  };
  const std::string one = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::vector<Case> cases = {
      {"shorter than 8 bytes", Bytes{1, 2, 3}, "shorter than the 8-byte"},
      {"huge header length", image(one, 8, 1ull << 60), "exceeds the 100 MB limit"},
      {"header length past EOF", image(one, 8, one.size() + 100), "runs past the end"},
      {"truncated data", [&] { Bytes b = image(one, 8); b.resize(b.size() - 3); return b; }(), "past the 5-byte data"},
      {"bad JSON", image(R"({"t":{"dtype":"F32",)", 0), "not valid JSON"},
      {"not an object", image(R"([1,2])", 0), "not a JSON object"},
      {"offsets past EOF", image(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,800]}})", 8), "past the 8-byte"},
      {"shape/size mismatch", image(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "needs 12 bytes"},
      {"unsupported dtype", image(R"({"t":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", 8), "'F64' not supported"},
      {"negative dimension", image(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8), "non-negative"},
      {"fractional offset", image(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8.5]}})", 8), "non-negative integers"},
      {"shape overflow", image(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8), "overflows"},
      {"begin after end", image(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", 8), "begin > end"},
      {"missing offsets", image(R"({"t":{"dtype":"F32","shape":[2]}})", 8), "data_offsets must be"},
      {"unknown field", image(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", 8), "unknown field 'x'"},
      {"overlap", image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8), "overlaps"},
      {"gap", image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8), "gap of 4 bytes"},
      {"trailing bytes", image(one, 12), "4 bytes after the last tensor"},
      {"duplicate name", image(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8), "appears twice"},
      {"deep nesting", image(R"({"t":{"dtype":"F32","shape":[[[[1]]]],"data_offsets":[0,4]}})", 4), "nested too deeply"},
      {"metadata not strings", image(R"({"__metadata__":{"a":1}})", 0), "is not a string"},
      {"invalid UTF-8 in a name", image(std::string("{\"\xff\":1}"), 0), "not valid JSON"},
  };
  for (const Case& c : cases) {
    INFO(c.label);
    const std::string msg = error_of(c.bytes);
    CHECK_THAT(msg, Catch::Contains(c.expect));
    CHECK_THAT(msg, Catch::StartsWith("safetensors test.safetensors: "));
    CHECK(msg.find('\n') == std::string::npos);
  }
  // Messages about one tensor name it.
  CHECK_THAT(error_of(cases[7].bytes), Catch::Contains("tensor 't'"));
}

TEST_CASE("safetensors: random corruptions of a valid file parse or fail cleanly", "[gpt2][safetensors]") {
  // A bounded mutation fuzz: flip, truncate or extend; the only allowed failure is runtime_error.
  const Bytes good = image(kGood, 32);
  std::mt19937_64 rng(12345);
  int parsed = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Bytes b = good;
    const int kind = static_cast<int>(rng() % 3);
    if (kind == 0) {
      for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
    } else if (kind == 1) {
      b.resize(rng() % b.size());
    } else {
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(rng() % b.size()), static_cast<std::uint8_t>(rng()));
    }
    try {
      const st::File f = parse(b);
      for (const auto& [name, t] : f.tensors)  // every view lies inside the buffer
        REQUIRE((t.nbytes == 0 || (t.data >= f.bytes->data() && t.data + t.nbytes <= f.bytes->data() + f.bytes->size())));
      ++parsed;
    } catch (const std::runtime_error&) {
      ++rejected;
    }
  }
  CHECK(parsed + rejected == 3000);
  CHECK(rejected > 1000);  // most corruptions are caught, and some (data bytes) are harmless
  CHECK(parsed > 0);
}

TEST_CASE("safetensors: write_file and read_file go through the disk", "[gpt2][safetensors]") {
  const std::string path = std::string(GAUGELAB_BINARY_DIR) + "/test_gpt2_rw.safetensors";
  st::write_file(path, {{"x", st::DType::F32, {1}, Bytes{0, 0, 128, 63}}});
  const st::File f = st::read_file(path);
  float v = 0;
  std::memcpy(&v, f.at("x").data, 4);
  CHECK(v == 1.0f);
  CHECK_THROWS_WITH(st::read_file(path + ".missing"), Catch::Contains("cannot open"));
}

}  // namespace GAUGELAB_TU

#include "gpt2/model/safetensors.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/atomic_file.hpp"

namespace gaugelab::gpt2::safetensors {

namespace {

constexpr std::size_t kMaxRank = 8;        // GPT-2 needs 2; anything deeper is not a weight file
constexpr int kMaxJsonDepth = 3;           // root object -> entry object -> shape / offsets arrays

[[noreturn]] void fail_safetensors(const std::string& what, const std::string& msg) {
  throw std::runtime_error("safetensors " + what + ": " + msg);
}
[[noreturn]] void fail_tensor(const std::string& what, const std::string& name, const std::string& msg) {
  fail_safetensors(what, "tensor '" + name + "': " + msg);
}

bool parse_dtype(const std::string& s, DType& out) {
  if (s == "F32") out = DType::F32;
  else if (s == "F16") out = DType::F16;
  else if (s == "BF16") out = DType::BF16;
  else return false;
  return true;
}

std::uint64_t read_u64_le(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A non-negative integer that fits in 63 bits, else throws.
std::uint64_t as_index(const nlohmann::json& v, const std::string& what, const std::string& name,
                       const char* field) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    fail_tensor(what, name, std::string(field) + " must hold non-negative integers");
  const auto x = v.get<std::uint64_t>();
  if (x > static_cast<std::uint64_t>(INT64_MAX)) fail_tensor(what, name, std::string(field) + " value too large");
  return x;
}

struct Range {
  std::uint64_t begin, end;
  const std::string* name;
};

}  // namespace

const char* dtype_name(DType t) { return t == DType::F32 ? "F32" : t == DType::F16 ? "F16" : "BF16"; }
std::size_t dtype_size(DType t) { return t == DType::F32 ? 4 : 2; }

std::int64_t TensorView::numel() const {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

const TensorView& File::at(const std::string& name) const {
  const auto it = tensors.find(name);
  if (it == tensors.end()) fail_safetensors(what, "tensor '" + name + "' is missing");
  return it->second;
}

File parse(std::shared_ptr<const std::vector<std::uint8_t>> bytes, const std::string& what) {
  if (!bytes) fail_safetensors(what, "no data");
  const std::uint64_t size = bytes->size();
  if (size < 8) fail_safetensors(what, "file is " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  const std::uint8_t* base = bytes->data();
  const std::uint64_t n = read_u64_le(base);
  if (n > kMaxHeaderBytes) fail_safetensors(what, "header length " + std::to_string(n) + " exceeds the 100 MB limit");
  if (n > size - 8)
    fail_safetensors(what, "header length " + std::to_string(n) + " runs past the end of the " + std::to_string(size) +
                   "-byte file");
  if (n < 2 || base[8] != '{') fail_safetensors(what, "header is not a JSON object");

  // Parse with a callback that bounds the nesting and rejects repeated names (a JSON parser would
  // silently keep the last one, letting two readers of the same file disagree).
  std::set<std::string> seen;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(
        base + 8, base + 8 + n,
        [&](int depth, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
          if (depth > kMaxJsonDepth) fail_safetensors(what, "header JSON is nested too deeply");
          if (ev == nlohmann::json::parse_event_t::key && depth == 1) {
            const std::string key = parsed.get<std::string>();
            if (!seen.insert(key).second) fail_safetensors(what, "tensor '" + key + "' appears twice in the header");
          }
          return true;
        });
  } catch (const nlohmann::json::exception& e) {
    fail_safetensors(what, std::string("header is not valid JSON (") + e.what() + ")");
  }
  if (!header.is_object()) fail_safetensors(what, "header is not a JSON object");

  File file;
  file.what = what;
  const std::uint64_t data_begin = 8 + n, data_size = size - data_begin;
  std::vector<Range> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& e = it.value();
    if (name == "__metadata__") {
      if (!e.is_object()) fail_safetensors(what, "__metadata__ must be an object of strings");
      for (auto m = e.begin(); m != e.end(); ++m) {
        if (!m.value().is_string()) fail_safetensors(what, "__metadata__ value '" + m.key() + "' is not a string");
        file.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!e.is_object()) fail_tensor(what, name, "entry is not an object");
    for (auto f = e.begin(); f != e.end(); ++f)
      if (f.key() != "dtype" && f.key() != "shape" && f.key() != "data_offsets")
        fail_tensor(what, name, "unknown field '" + f.key() + "'");
    if (!e.contains("dtype") || !e["dtype"].is_string()) fail_tensor(what, name, "dtype missing or not a string");
    TensorView view;
    const std::string dt = e["dtype"].get<std::string>();
    if (!parse_dtype(dt, view.dtype)) fail_tensor(what, name, "dtype '" + dt + "' not supported (F32, F16, BF16)");
    if (!e.contains("shape") || !e["shape"].is_array()) fail_tensor(what, name, "shape missing or not an array");
    if (e["shape"].size() > kMaxRank) fail_tensor(what, name, "rank " + std::to_string(e["shape"].size()) + " > 8");
    std::uint64_t numel = 1;
    for (const auto& s : e["shape"]) {
      const std::uint64_t dim = as_index(s, what, name, "shape");
      if (__builtin_mul_overflow(numel, dim, &numel)) fail_tensor(what, name, "shape overflows");
      view.shape.push_back(static_cast<std::int64_t>(dim));
    }
    std::uint64_t nbytes = 0;
    if (__builtin_mul_overflow(numel, dtype_size(view.dtype), &nbytes)) fail_tensor(what, name, "shape overflows");
    if (!e.contains("data_offsets") || !e["data_offsets"].is_array() || e["data_offsets"].size() != 2)
      fail_tensor(what, name, "data_offsets must be [begin, end]");
    const std::uint64_t b = as_index(e["data_offsets"][0], what, name, "data_offsets");
    const std::uint64_t en = as_index(e["data_offsets"][1], what, name, "data_offsets");
    if (b > en) fail_tensor(what, name, "data_offsets begin > end");
    if (en > data_size)
      fail_tensor(what, name, "data_offsets end " + std::to_string(en) + " past the " + std::to_string(data_size) +
                                  "-byte data buffer");
    if (en - b != nbytes)
      fail_tensor(what, name, "shape needs " + std::to_string(nbytes) + " bytes but data_offsets span " +
                                  std::to_string(en - b));
    view.data = base + data_begin + b;
    view.nbytes = static_cast<std::size_t>(nbytes);
    const auto [pos, fresh] = file.tensors.emplace(name, std::move(view));
    ranges.push_back({b, en, &pos->first});
  }
  // The ranges must tile [0, data_size): sorted by (begin, end), each starts where the last ended.
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::uint64_t cursor = 0;
  for (const Range& r : ranges) {
    if (r.begin < cursor) fail_tensor(what, *r.name, "data overlaps another tensor's");
    if (r.begin > cursor) fail_tensor(what, *r.name, "gap of " + std::to_string(r.begin - cursor) + " bytes before its data");
    cursor = r.end;
  }
  if (cursor != data_size)
    fail_safetensors(what, std::to_string(data_size - cursor) + " bytes after the last tensor belong to no tensor");
  file.bytes = std::move(bytes);
  return file;
}

File read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_safetensors(path, "cannot open");
  in.seekg(0, std::ios::end);
  const std::streamoff len = in.tellg();
  if (len < 0) fail_safetensors(path, "cannot determine the size");
  in.seekg(0);
  auto bytes = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(len));
  if (len > 0 && !in.read(reinterpret_cast<char*>(bytes->data()), len)) fail_safetensors(path, "read failed");
  return parse(std::move(bytes), path);
}

std::vector<std::uint8_t> serialize(const std::vector<TensorData>& tensors,
                                    const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const TensorData& t : tensors) {
    if (t.name == "__metadata__" || header.contains(t.name))
      throw std::runtime_error("safetensors: tensor name '" + t.name + "' repeated or reserved");
    std::uint64_t numel = 1;
    for (std::int64_t s : t.shape) {
      if (s < 0) throw std::runtime_error("safetensors: tensor '" + t.name + "' has a negative dimension");
      numel *= static_cast<std::uint64_t>(s);
    }
    if (numel * dtype_size(t.dtype) != t.bytes.size())
      throw std::runtime_error("safetensors: tensor '" + t.name + "' byte count does not match its shape");
    header[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // data buffer 8-byte aligned
  std::vector<std::uint8_t> out(8 + text.size() + offset);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + 8, text.data(), text.size());
  std::size_t pos = 8 + text.size();
  for (const TensorData& t : tensors) {
    if (!t.bytes.empty()) std::memcpy(out.data() + pos, t.bytes.data(), t.bytes.size());
    pos += t.bytes.size();
  }
  return out;
}

void write_file(const std::string& path, const std::vector<TensorData>& tensors,
                const std::map<std::string, std::string>& metadata) {
  const std::vector<std::uint8_t> image = serialize(tensors, metadata);
  io::write_atomically(path, image.data(), image.size(), "safetensors " + path);
}

}  // namespace gaugelab::gpt2::safetensors

// The safetensors file format (Hugging Face), read and written without LibTorch so the reader can be
// fuzzed on its own. Layout:
//   [8 bytes little-endian u64 N] [N bytes JSON header] [data buffer]
//   header: {"<name>": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//            "__metadata__": {"<key>": "<string>", ...}}  (offsets relative to the data buffer)
// The reader treats its input as untrusted. It checks the header length against the file size and
// a cap, parses the JSON (duplicate names rejected), accepts only F32, F16 and BF16, checks every
// shape (non-negative, no overflow) against its byte range, every range against the buffer, and
// requires the ranges to tile the buffer exactly (no overlap, no hole: nothing hides in a gap).
// Every failure is one std::runtime_error line naming the file and, where there is one, the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gaugelab::gpt2::safetensors {

enum class DType { F32, F16, BF16 };
const char* dtype_name(DType t);  // "F32", "F16", "BF16"
std::size_t dtype_size(DType t);  // 4, 2, 2

/// One tensor: a view into the owning buffer (little-endian, row-major, possibly unaligned).
struct TensorView {
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  const std::uint8_t* data = nullptr;
  std::size_t nbytes = 0;
  std::int64_t numel() const;
};

/// Largest header the reader accepts (the reference implementation uses the same 100 MB cap).
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

/// A parsed file. Views point into `bytes`, which the File owns.
struct File {
  std::shared_ptr<const std::vector<std::uint8_t>> bytes;
  std::map<std::string, TensorView> tensors;       // by name, sorted
  std::map<std::string, std::string> metadata;     // "__metadata__"
  const TensorView& at(const std::string& name) const;  // throws naming the file and the tensor
  std::string what;                                // the file name used in messages
};

/// Parses an in-memory file (`what` names it in errors). Throws std::runtime_error, never crashes.
File parse(std::shared_ptr<const std::vector<std::uint8_t>> bytes, const std::string& what);
/// Reads and parses `path`.
File read_file(const std::string& path);

/// A tensor to write: raw little-endian bytes of `shape` in `dtype`.
struct TensorData {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;
};

/// The complete file image, tensors in the given order; the header is padded with spaces so the
/// data buffer starts 8-byte aligned. Throws if a name repeats or a byte count does not match.
std::vector<std::uint8_t> serialize(const std::vector<TensorData>& tensors,
                                    const std::map<std::string, std::string>& metadata = {});
/// serialize() written to `path` through a temporary file and a rename (no half-written file).
void write_file(const std::string& path, const std::vector<TensorData>& tensors,
                const std::map<std::string, std::string>& metadata = {});

}  // namespace gaugelab::gpt2::safetensors

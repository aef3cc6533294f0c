// Reading and writing safetensors files (fixtures shared with the Python worker).
// Format: 8-byte little-endian header length N, N bytes of JSON header mapping each
// tensor name to {"dtype", "shape", "data_offsets": [begin, end)} relative to the byte
// after the header, optional "__metadata__" (string -> string), then the raw data.
// Source: https://huggingface.co/docs/safetensors (format description).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace kernelevolve::eval {

/// One tensor held in memory, dense row-major. `bytes` comes from operator new, so it is
/// aligned for every DType (16 bytes on x86-64/glibc), not to a cache line.
struct HostTensor {
  std::string name;
  core::DType dtype = core::DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;  // NumElements * DTypeSize bytes

  /// Product of the shape (1 for a 0-d tensor, 0 when a dimension is 0).
  int64_t NumElements() const;
  /// Elements viewed as T (T must match dtype: float, double, uint16_t for float16 /
  /// bfloat16 bits, int8_t ... int64_t, uint8_t, and uint8_t for bool).
  template <typename T>
  const T* Data() const { return reinterpret_cast<const T*>(bytes.data()); }
  /// Mutable view of the elements; same rule for T as Data().
  template <typename T>
  T* MutableData() { return reinterpret_cast<T*>(bytes.data()); }
};

/// Contents of one safetensors file.
struct SafetensorsFile {
  std::map<std::string, std::string> metadata;  ///< "__metadata__" entries, empty if none
  std::vector<HostTensor> tensors;               ///< in data-offset order
  /// Tensor by name; throws InvalidInputError when absent.
  const HostTensor& Get(const std::string& name) const;
};

/// Reads a whole file into memory. Throws IoError (missing or unreadable) or
/// InvalidInputError naming the file (malformed: header length beyond the file or above
/// 100 MB, header not a JSON object, unsupported dtype, data_offsets outside the data
/// section, byte span not equal to shape * dtype size, overlapping tensors). Unindexed
/// bytes in the data section are tolerated. Tensors come back sorted by data offset.
SafetensorsFile ReadSafetensors(const std::filesystem::path& path);

/// Writes tensors (data laid out in the given order) and metadata; the JSON header is
/// space-padded so the data section starts 8-byte aligned. Atomic: writes and fsyncs
/// `<path>.tmp.<pid>.<k>`, then renames it over `path`. Throws IoError (cannot create,
/// write or rename) or InvalidInputError (a tensor whose byte count does not match its
/// shape and dtype, a negative dimension, a duplicate name, or the reserved name
/// "__metadata__"); nothing is left behind on failure.
void WriteSafetensors(const std::filesystem::path& path, const std::vector<HostTensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace kernelevolve::eval

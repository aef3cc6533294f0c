#include "eval/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kernelevolve::eval {
namespace {

using core::InvalidInputError;
using core::IoError;

constexpr uint64_t kPrefixBytes = 8;
// Same cap as the reference implementation (huggingface/safetensors, MAX_HEADER_SIZE).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct Entry {
  std::string name;
  core::DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin;
  uint64_t end;
};

[[noreturn]] void Malformed(const std::filesystem::path& path, const std::string& what) {
  throw InvalidInputError("malformed safetensors file " + path.string() + ": " + what +
                          "; regenerate the file (fixtures come from the Python worker)");
}

uint64_t ReadU64Le(const unsigned char* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

// *out = product of `shape` times `element_size`; false on uint64 overflow.
bool ByteCount(const std::vector<int64_t>& shape, std::size_t element_size, uint64_t* out) {
  uint64_t count = element_size;
  for (int64_t dim : shape) {
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count)) return false;
  }
  *out = count;
  return true;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return text + "]";
}

Entry ParseEntry(const std::filesystem::path& path, const std::string& name,
                 const nlohmann::json& info, uint64_t data_bytes) {
  const std::string where = "tensor '" + name + "'";
  if (!info.is_object()) Malformed(path, where + " is not a JSON object");
  Entry entry{name, core::DType::kFloat32, {}, 0, 0};
  const auto dtype = info.find("dtype");
  if (dtype == info.end() || !dtype->is_string()) Malformed(path, where + " has no string 'dtype'");
  try {
    entry.dtype = core::DTypeFromSafetensorsCode(dtype->get<std::string>());
  } catch (const InvalidInputError&) {
    Malformed(path, where + " has unsupported dtype '" + dtype->get<std::string>() +
                        "' (supported: F32 F64 F16 BF16 I8 I16 I32 I64 U8 BOOL)");
  }
  const auto shape = info.find("shape");
  if (shape == info.end() || !shape->is_array()) Malformed(path, where + " has no array 'shape'");
  for (const auto& dim : *shape) {
    if (!dim.is_number_unsigned() ||
        dim.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      Malformed(path, where + " has a shape entry that is not a non-negative integer");
    }
    entry.shape.push_back(static_cast<int64_t>(dim.get<uint64_t>()));
  }
  const auto offsets = info.find("data_offsets");
  if (offsets == info.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
    Malformed(path, where + " needs 'data_offsets' as two non-negative integers [begin, end)");
  }
  entry.begin = (*offsets)[0].get<uint64_t>();
  entry.end = (*offsets)[1].get<uint64_t>();
  if (entry.begin > entry.end || entry.end > data_bytes) {
    Malformed(path, where + " has data_offsets [" + std::to_string(entry.begin) + ", " +
                        std::to_string(entry.end) + ") outside the " + std::to_string(data_bytes) +
                        "-byte data section");
  }
  uint64_t expected = 0;
  if (!ByteCount(entry.shape, core::DTypeSize(entry.dtype), &expected)) {
    Malformed(path, where + " shape " + ShapeText(entry.shape) + " of " +
                        std::string(core::DTypeName(entry.dtype)) + " is too large");
  }
  if (expected != entry.end - entry.begin) {
    Malformed(path, where + " spans " + std::to_string(entry.end - entry.begin) +
                        " bytes but shape " + ShapeText(entry.shape) + " of " +
                        std::string(core::DTypeName(entry.dtype)) + " needs " +
                        std::to_string(expected));
  }
  return entry;
}

std::map<std::string, std::string> ParseMetadata(const std::filesystem::path& path,
                                                 const nlohmann::json& value) {
  if (!value.is_object()) Malformed(path, "'__metadata__' is not a JSON object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) Malformed(path, "'__metadata__' value for '" + key + "' is not a string");
    metadata[key] = item.get<std::string>();
  }
  return metadata;
}

// Writes all of `size` bytes to `fd`; false on error (errno set).
bool WriteAll(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, p, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
}

std::string BuildHeader(const std::filesystem::path& path, const std::vector<HostTensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& tensor : tensors) {
    const std::string where = "cannot write " + path.string() + ": tensor '" + tensor.name + "'";
    if (tensor.name == "__metadata__") throw InvalidInputError(where + " uses a reserved name");
    if (!names.insert(tensor.name).second) throw InvalidInputError(where + " appears twice");
    uint64_t expected = 0;
    if (std::any_of(tensor.shape.begin(), tensor.shape.end(), [](int64_t d) { return d < 0; }) ||
        !ByteCount(tensor.shape, core::DTypeSize(tensor.dtype), &expected) ||
        expected != tensor.bytes.size()) {
      throw InvalidInputError(where + " holds " + std::to_string(tensor.bytes.size()) +
                              " bytes, which does not match shape " + ShapeText(tensor.shape) +
                              " of " + std::string(core::DTypeName(tensor.dtype)));
    }
    header[tensor.name] = {{"dtype", core::SafetensorsCode(tensor.dtype)},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + expected}}};
    offset += expected;
  }
  std::string text = header.dump();
  // Pad with spaces so the data section starts 8-byte aligned (as the Python writer does).
  text.append((kPrefixBytes - text.size() % kPrefixBytes) % kPrefixBytes, ' ');
  return text;
}

}  // namespace

int64_t HostTensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const HostTensor& SafetensorsFile::Get(const std::string& name) const {
  for (const auto& tensor : tensors) {
    if (tensor.name == name) return tensor;
  }
  std::string available;
  for (const auto& tensor : tensors) available += (available.empty() ? "" : ", ") + tensor.name;
  throw InvalidInputError("no tensor named '" + name + "' in safetensors file (it holds: " +
                          (available.empty() ? "nothing" : available) + ")");
}

SafetensorsFile ReadSafetensors(const std::filesystem::path& path) {
  std::error_code error;
  const uint64_t file_bytes = std::filesystem::file_size(path, error);
  if (error) throw IoError("cannot read safetensors file " + path.string() + ": " + error.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open safetensors file " + path.string() + ": " + std::strerror(errno));
  if (file_bytes < kPrefixBytes) {
    Malformed(path, "file is " + std::to_string(file_bytes) + " bytes, shorter than the 8-byte header length");
  }
  unsigned char prefix[kPrefixBytes];
  if (!in.read(reinterpret_cast<char*>(prefix), kPrefixBytes)) {
    throw IoError("cannot read safetensors file " + path.string());
  }
  const uint64_t header_bytes = ReadU64Le(prefix);
  if (header_bytes > file_bytes - kPrefixBytes || header_bytes > kMaxHeaderBytes) {
    Malformed(path, "header length " + std::to_string(header_bytes) + " exceeds the " +
                        std::to_string(file_bytes - kPrefixBytes) + " bytes after the length field");
  }
  std::string header_text(header_bytes, '\0');
  if (!in.read(header_text.data(), static_cast<std::streamsize>(header_bytes))) {
    throw IoError("cannot read header of safetensors file " + path.string());
  }
  const nlohmann::json header = nlohmann::json::parse(header_text, nullptr, false);
  if (header.is_discarded() || !header.is_object()) Malformed(path, "header is not a JSON object");

  const uint64_t data_start = kPrefixBytes + header_bytes;
  const uint64_t data_bytes = file_bytes - data_start;
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      file.metadata = ParseMetadata(path, info);
    } else {
      entries.push_back(ParseEntry(path, name, info, data_bytes));
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end != b.end ? a.end < b.end : a.name < b.name;
  });
  for (std::size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].begin < entries[i - 1].end) {
      Malformed(path, "tensors '" + entries[i - 1].name + "' and '" + entries[i].name +
                          "' overlap in the data section");
    }
  }
  for (auto& entry : entries) {
    HostTensor tensor{entry.name, entry.dtype, std::move(entry.shape), {}};
    tensor.bytes.resize(entry.end - entry.begin);
    in.seekg(static_cast<std::streamoff>(data_start + entry.begin));
    if (!in.read(reinterpret_cast<char*>(tensor.bytes.data()),
                 static_cast<std::streamsize>(tensor.bytes.size()))) {
      throw IoError("cannot read tensor '" + tensor.name + "' from safetensors file " + path.string());
    }
    file.tensors.push_back(std::move(tensor));
  }
  return file;
}

void WriteSafetensors(const std::filesystem::path& path, const std::vector<HostTensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const std::string header = BuildHeader(path, tensors, metadata);
  unsigned char prefix[kPrefixBytes];
  for (std::size_t i = 0; i < kPrefixBytes; ++i) {
    prefix[i] = static_cast<unsigned char>((static_cast<uint64_t>(header.size()) >> (8 * i)) & 0xFF);
  }
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path temp = path;
  temp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw IoError("cannot create " + temp.string() + " (writing " + path.string() +
                  "): " + std::strerror(errno));
  }
  bool ok = WriteAll(fd, prefix, kPrefixBytes) && WriteAll(fd, header.data(), header.size());
  for (std::size_t i = 0; ok && i < tensors.size(); ++i) {
    ok = WriteAll(fd, tensors[i].bytes.data(), tensors[i].bytes.size());
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved_errno = errno;
  ok = (::close(fd) == 0) && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(ok ? errno : saved_errno);
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw IoError("cannot write safetensors file " + path.string() + ": " + reason);
  }
}

}  // namespace kernelevolve::eval

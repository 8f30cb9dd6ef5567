// A read-only memory mapping of a whole file: model weights are used in place, never copied.
// Shared by the model-format plugins.
#pragma once

#include <cstdint>
#include <string>

#include <tl/expected.hpp>

namespace lpx::formats {

class MappedFile {
 public:
  // Maps `path` read-only. Errors name the path and the system's reason.
  static tl::expected<MappedFile, std::string> open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::uint8_t* data() const noexcept { return data_; }
  std::uint64_t size() const noexcept { return size_; }

 private:
  MappedFile(const std::uint8_t* data, std::uint64_t size) noexcept : data_(data), size_(size) {}
  const std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace lpx::formats

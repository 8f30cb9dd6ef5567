// A bounds-checked little-endian cursor over untrusted bytes. Every read first checks that the
// bytes are there; nothing here can read outside [begin, end).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>

namespace lpx::gguf {

class ByteReader {
 public:
  ByteReader(const std::uint8_t* begin, std::uint64_t size) noexcept : begin_(begin), size_(size) {}

  std::uint64_t position() const noexcept { return position_; }
  std::uint64_t remaining() const noexcept { return size_ - position_; }
  const std::uint8_t* data_at(std::uint64_t offset) const noexcept { return begin_ + offset; }

  // A little-endian scalar, or nothing when fewer than sizeof(T) bytes remain.
  template <class T>
  std::optional<T> read() noexcept {
    static_assert(std::is_trivially_copyable_v<T>);
    if (remaining() < sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, begin_ + position_, sizeof(T));  // unaligned-safe; the host is little-endian
    position_ += sizeof(T);
    return value;
  }

  // `length` bytes as text, or nothing when they are not all there.
  std::optional<std::string_view> read_bytes(std::uint64_t length) noexcept {
    if (remaining() < length) return std::nullopt;
    std::string_view text(reinterpret_cast<const char*>(begin_ + position_), length);
    position_ += length;
    return text;
  }

  // Skips `length` bytes; false when they are not all there.
  bool skip(std::uint64_t length) noexcept {
    if (remaining() < length) return false;
    position_ += length;
    return true;
  }

 private:
  const std::uint8_t* begin_;
  std::uint64_t size_;
  std::uint64_t position_ = 0;
};

static_assert(std::endian::native == std::endian::little, "GGUF files are little-endian");

}  // namespace lpx::gguf

// An allocator whose blocks start on a cache line: the CPU backends' activation and scratch
// buffers, read with 256- and 512-bit loads that would otherwise straddle two lines every
// other load (glibc's large blocks start 16 bytes past a page; 30 % of the i16 prompt tile's
// time on the 2-core Xeon).
#pragma once

#include <cstddef>
#include <new>

namespace lpx::kernels::cpu {

inline constexpr std::size_t kCacheLine = 64;

template <class T>
struct CacheAligned {
  using value_type = T;
  CacheAligned() = default;
  template <class U>
  constexpr CacheAligned(const CacheAligned<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kCacheLine})); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{kCacheLine}); }
  template <class U>
  bool operator==(const CacheAligned<U>&) const noexcept {
    return true;
  }
};

}  // namespace lpx::kernels::cpu

// An array of zeros that costs no memory until it is written: calloc, which
// for a large size gets fresh pages from the operating system (already zero,
// so not cleared again) and commits each page only when it is first touched.
// The KV cache is allocated this way: a cache sized for every request's full
// context takes physical memory only as tokens are written into it.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace weft {

template <typename T>
class ZeroedArray {
 public:
  ZeroedArray() = default;
  // Throws std::bad_alloc when the memory cannot be reserved.
  explicit ZeroedArray(size_t n) : data_(n == 0 ? nullptr : static_cast<T*>(std::calloc(n, sizeof(T)))), size_(n) {
    if (n != 0 && data_ == nullptr) throw std::bad_alloc();
  }
  ZeroedArray(ZeroedArray&& other) noexcept : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  ZeroedArray& operator=(ZeroedArray&& other) noexcept {
    if (this != &other) {
      std::free(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;
  ~ZeroedArray() { std::free(data_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace weft

// Model files memory-mapped read-only, so that weights the backend uses as
// they lie in the file (same dtype and layout, aligned) are in memory once:
// the page cache's copy is the model's copy, loading them reads nothing, and
// their pages come in as a step first touches them. Weights the backend
// converts (quantizes, widens, repacks) are read and copied instead and never
// touch the mapping (weights.cc).
//
// A mapped file must not be truncated or rewritten in place while a model
// uses it (a read of a page past the new end faults the process); replacing
// it by rename, the usual way to update a file, is safe: the mapping keeps
// the old file. `mmap: false` (src/backends/cpu) reads every weight instead.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace weft {

class MappedFile {
 public:
  // Maps the whole file at `path`; "" or an error in *error.
  static std::shared_ptr<const MappedFile> open(const std::string& path, std::string* error);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  // The file's identity (device, inode) when it was mapped.
  std::pair<uint64_t, uint64_t> identity() const { return identity_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  std::pair<uint64_t, uint64_t> identity_{0, 0};
};

// The files a model maps, each once while any of its tensors uses it (weak
// references: a file none of whose tensors was kept mapped is unmapped).
class MappedFiles {
 public:
  // Whether this platform maps files (POSIX); elsewhere every weight is read.
  static bool supported();
  // The mapping of `path`, shared with earlier tensors of the same file (same
  // device and inode); nullptr and *error set when it cannot be mapped.
  std::shared_ptr<const MappedFile> get(const std::string& path, std::string* error);

 private:
  std::map<std::string, std::weak_ptr<const MappedFile>> files_;
};

}  // namespace weft

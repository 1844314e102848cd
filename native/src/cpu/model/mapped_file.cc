// Read-only file mappings (see mapped_file.h).
#include "model/mapped_file.h"

#include <cerrno>
#include <cstring>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define WEFT_HAVE_MMAP 1
#endif

namespace weft {

#if defined(WEFT_HAVE_MMAP)

namespace {
// (device, inode) of an open file, or of a path; false when it cannot be read.
bool identity_of(int fd, std::pair<uint64_t, uint64_t>* id, uint64_t* size) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  *id = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  *size = static_cast<uint64_t>(st.st_size);
  return true;
}
}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  uint64_t size = 0;
  if (!identity_of(fd, &file->identity_, &size)) {
    ::close(fd);
    *error = path + " is not a regular file";
    return nullptr;
  }
  if (size > 0) {
    void* p = mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      *error = "cannot map " + path + ": " + std::strerror(e);
      return nullptr;
    }
    file->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file
  file->size_ = size;
  return file;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
}

bool MappedFiles::supported() { return true; }

std::shared_ptr<const MappedFile> MappedFiles::get(const std::string& path, std::string* error) {
  std::shared_ptr<const MappedFile> file = files_[path].lock();
  if (file) {
    // The same file still? (A file replaced at this path since is mapped anew.)
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_dev) == file->identity().first &&
        static_cast<uint64_t>(st.st_ino) == file->identity().second && static_cast<uint64_t>(st.st_size) == file->size())
      return file;
  }
  file = MappedFile::open(path, error);
  if (file) files_[path] = file;
  return file;
}

#else

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, std::string* error) {
  *error = "memory-mapping files is not supported on this platform";
  return nullptr;
}
MappedFile::~MappedFile() = default;
bool MappedFiles::supported() { return false; }
std::shared_ptr<const MappedFile> MappedFiles::get(const std::string& path, std::string* error) {
  return MappedFile::open(path, error);
}

#endif

}  // namespace weft

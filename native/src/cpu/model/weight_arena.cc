#include "model/weight_arena.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace weft {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
// Chunks are mapped this large (only touched pages count), so a 0.6B model's
// ~200 matrices share a handful of them; a larger matrix gets a chunk of its own.
constexpr size_t kChunkBytes = size_t{64} << 20;
constexpr size_t kAlign = 64;  // every kernel's widest load

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

bool transparent_huge_pages_available() {
#if defined(__linux__)
  std::string mode;
  std::getline(std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"), mode);
  return !mode.empty() && mode.find("[never]") == std::string::npos;
#else
  return false;
#endif
}

WeightArena::~WeightArena() {
  for (const Chunk& c : chunks_) {
#if defined(__linux__)
    munmap(c.base, c.size);
#else
    std::free(c.owner);
#endif
  }
}

WeightArena::Chunk* WeightArena::chunk_with_room(size_t bytes) {
  if (!chunks_.empty() && chunks_.back().size - chunks_.back().used >= bytes) return &chunks_.back();
  const size_t size = round_up(std::max(bytes, kChunkBytes), kHugePage);
  Chunk c{nullptr, size, 0, nullptr};
#if defined(__linux__)
  // Map one huge page more than needed and trim both ends to 2 MiB alignment.
  void* p = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(p), aligned = round_up(start, kHugePage);
  if (aligned > start) munmap(p, aligned - start);
  if (const size_t after = start + size + kHugePage - (aligned + size)) munmap(reinterpret_cast<void*>(aligned + size), after);
  c.base = reinterpret_cast<uint8_t*>(aligned);
  // A refusal (no THP in this kernel) leaves ordinary pages: still correct.
  if (transparent_huge_pages_available() && madvise(c.base, size, MADV_HUGEPAGE) == 0) huge_pages_ = true;
#else
  c.owner = std::calloc(size + kAlign, 1);
  if (c.owner == nullptr) return nullptr;
  c.base = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(c.owner), kAlign));
#endif
  try {
    chunks_.push_back(c);
  } catch (...) {
#if defined(__linux__)
    munmap(c.base, c.size);
#else
    std::free(c.owner);
#endif
    return nullptr;
  }
  return &chunks_.back();
}

uint8_t* WeightArena::allocate(size_t bytes) {
  bytes = round_up(std::max<size_t>(bytes, 1), kAlign);
  Chunk* c = chunk_with_room(bytes);
  if (c == nullptr) return nullptr;
  uint8_t* p = c->base + c->used;
  c->used += bytes;
  return p;
}

void WeightArena::release(uint8_t* p, size_t bytes) {
#if defined(__linux__)
  const size_t page = 4096;
  const uintptr_t begin = round_up(reinterpret_cast<uintptr_t>(p), page);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  // MADV_DONTNEED: the pages read as zero again if touched (the invariant above).
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace weft

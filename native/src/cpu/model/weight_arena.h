// Where a model's weight matrices live when they are read into memory (not
// used from the file's mapping): a few large chunks of zeroed anonymous
// memory, 2 MiB-aligned and advised as transparent huge pages on Linux,
// handed out by bumping a pointer.
//
// Why: one-token decode streams every weight once per token, and on 4 KiB
// pages each 4 KiB costs a TLB miss and restarts the hardware prefetcher.
// Packing all matrices together (rather than one allocation each, which a
// 1-3 MiB matrix rarely lets cover a whole aligned 2 MiB) lets nearly every
// weight byte sit on a huge page: decode of one stream ran 1.17x faster at
// Q8_0 and 1.22x at F16 (against the file's mapping), bench/addon-ab on one
// thread (docs/cpu-backend.md#memory).
//
// Invariants:
// - allocate() returns 64-byte-aligned memory that reads as zero and is not
//   touched until its user writes it (untouched pages take no RSS);
// - ranges never overlap and are never handed out twice: release() gives a
//   range's pages back to the OS (its addresses stay reserved until the arena
//   goes; models load each weight once, so little is ever released);
// - every chunk is unmapped when the arena is destroyed, so the arena must
//   outlive every tensor that points into it (Weights declares it first).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft {

// Whether this OS gives anonymous memory huge pages when advised to (Linux,
// transparent huge pages set to "always" or "madvise"). The CPU backend reads
// weights into the arena rather than mapping the file where it does
// (CpuBackendOptions.mmap).
bool transparent_huge_pages_available();

class WeightArena {
 public:
  WeightArena() = default;
  ~WeightArena();
  WeightArena(const WeightArena&) = delete;
  WeightArena& operator=(const WeightArena&) = delete;

  // `bytes` of zeroed memory, or nullptr when the OS refuses it.
  uint8_t* allocate(size_t bytes);
  // Returns the pages wholly inside [p, p + bytes) to the OS.
  void release(uint8_t* p, size_t bytes);
  // Whether chunks were advised as huge pages (Linux with transparent huge
  // pages not set to "never"); reported with the model's memory.
  bool huge_pages() const { return huge_pages_; }

 private:
  struct Chunk {
    uint8_t* base;  // 2 MiB-aligned (Linux) or 64-byte-aligned
    size_t size;    // bytes mapped
    size_t used;    // bytes handed out, from base
    void* owner;    // what to free (non-Linux: the unaligned allocation)
  };
  Chunk* chunk_with_room(size_t bytes);

  std::vector<Chunk> chunks_;
  bool huge_pages_ = false;
};

}  // namespace weft

/*
 * Memory read bandwidth probe (portable C, no intrinsics): each of T threads
 * sums its slice of a buffer much larger than the caches, several passes,
 * best pass reported. Decode of one stream reads every weight once per token,
 * so bandwidth / weight bytes bounds its rate.
 *
 * On Linux the buffer is measured twice: on ordinary 4 KiB pages and advised
 * as transparent huge pages (2 MiB), which weft's weights use where the OS
 * has them (native/src/cpu/model/weight_arena.h) and which read faster here (fewer
 * TLB misses). The bound is the better of the two, so weft's fraction of it
 * is not flattered by the pages it chose.
 *
 *   cc -O3 -pthread bandwidth.c -o bandwidth && ./bandwidth <threads> [MiB]
 * Prints {"threads":T,"gbPerSecond":best,"plainPages":x,"hugePages":y|null}.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

typedef struct { const uint64_t* data; size_t count; uint64_t sum; } Slice;

static void* sum_slice(void* arg) {
  Slice* s = (Slice*)arg;
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i + 4 <= s->count; i += 4) {
    a += s->data[i]; b += s->data[i + 1]; c += s->data[i + 2]; d += s->data[i + 3];
  }
  s->sum = a + b + c + d;
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Best pass of `threads` threads summing `bytes` at `data` (already written). */
static double best_rate(const uint64_t* data, size_t bytes, int threads, uint64_t* check) {
  size_t count = bytes / 8;
  pthread_t ids[256];
  Slice slices[256];
  double best = 0;
  for (int pass = 0; pass < 5; pass++) {
    double t0 = now();
    for (int t = 0; t < threads; t++) {
      slices[t].data = data + (count / threads) * t;
      slices[t].count = count / threads;
      pthread_create(&ids[t], NULL, sum_slice, &slices[t]);
    }
    for (int t = 0; t < threads; t++) { pthread_join(ids[t], NULL); *check += slices[t].sum; }
    double rate = bytes / (now() - t0) / 1e9;
    if (rate > best) best = rate;
  }
  return best;
}

/* A 2 MiB-aligned buffer, advised as huge pages when `huge`; NULL if refused. */
static uint64_t* buffer(size_t bytes, int huge) {
  void* p = NULL;
  if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0) return NULL;
#if defined(__linux__)
  if (huge && madvise(p, bytes, MADV_HUGEPAGE) != 0) { free(p); return NULL; }
#else
  if (huge) { free(p); return NULL; }
#endif
  memset(p, 1, bytes);
  return (uint64_t*)p;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 1024;
  if (threads < 1 || threads > 256 || mib < 64) return 2;
  size_t bytes = mib << 20;
  uint64_t check = 0;
  double rates[2] = {0, -1};
  for (int huge = 0; huge < 2; huge++) {
    uint64_t* data = buffer(bytes, huge);
    if (!data) {
      if (!huge) return 3;
      continue;
    }
    rates[huge] = best_rate(data, bytes, threads, &check);
    free(data);
  }
  double best = rates[1] > rates[0] ? rates[1] : rates[0];
  if (rates[1] < 0)
    printf("{\"threads\":%d,\"gbPerSecond\":%.2f,\"plainPages\":%.2f,\"hugePages\":null,\"check\":%llu}\n", threads, best, rates[0], (unsigned long long)(check & 0xff));
  else
    printf("{\"threads\":%d,\"gbPerSecond\":%.2f,\"plainPages\":%.2f,\"hugePages\":%.2f,\"check\":%llu}\n", threads, best, rates[0], rates[1], (unsigned long long)(check & 0xff));
  return 0;
}

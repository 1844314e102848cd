/*
 * Memory read bandwidth probe (portable C, no intrinsics): each of T threads
 * sums its slice of a buffer much larger than the caches, several passes,
 * best pass reported. Decode of one stream reads every weight once per token,
 * so bandwidth / weight bytes bounds its rate.
 *
 *   cc -O3 -pthread bandwidth.c -o bandwidth && ./bandwidth <threads> [MiB]
 * Prints {"threads":T,"gbPerSecond":x}.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 1024;
  if (threads < 1 || threads > 256 || mib < 64) return 2;
  size_t bytes = mib << 20, count = bytes / 8;
  uint64_t* data = malloc(bytes);
  if (!data) return 3;
  memset(data, 1, bytes);
  pthread_t ids[256];
  Slice slices[256];
  double best = 0;
  uint64_t check = 0;
  for (int pass = 0; pass < 5; pass++) {
    double t0 = now();
    for (int t = 0; t < threads; t++) {
      slices[t].data = data + (count / threads) * t;
      slices[t].count = count / threads;
      pthread_create(&ids[t], NULL, sum_slice, &slices[t]);
    }
    for (int t = 0; t < threads; t++) { pthread_join(ids[t], NULL); check += slices[t].sum; }
    double rate = bytes / (now() - t0) / 1e9;
    if (rate > best) best = rate;
  }
  printf("{\"threads\":%d,\"gbPerSecond\":%.2f,\"check\":%llu}\n", threads, best, (unsigned long long)(check & 0xff));
  free(data);
  return 0;
}

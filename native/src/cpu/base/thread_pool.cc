#include "base/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace weft {

namespace {
// Spins until pred() or about `micros` microseconds have passed; true if pred().
template <typename Pred>
bool spin_until(Pred pred, int micros) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
  for (int i = 0;; ++i) {
    if (pred()) return true;
    if ((i & 63) == 63) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
  }
}
constexpr int kSpinMicros = 50;

// WEFT_PIN_THREADS=1: pin the pool's workers, one each, to CPUs of distinct
// physical cores (sysfs core ids; SMT siblings last), in the process's allowed
// set. Off by default: on a machine shared with other work a pinned thread
// cannot move off a busy core. Any failure (no sysfs, a restricted cpuset, a
// non-Linux OS) leaves the threads unpinned; it never fails the pool.
std::vector<int> pin_targets() {
  std::vector<int> cpus;
#if defined(__linux__)
  const char* env = std::getenv("WEFT_PIN_THREADS");
  if (!env || std::strcmp(env, "1") != 0) return cpus;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cpus;
  std::set<std::pair<int, int>> seen_cores;  // (package, core id)
  std::vector<int> siblings;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    int package = -1, core = cpu;
    std::ifstream(base + "physical_package_id") >> package;
    std::ifstream(base + "core_id") >> core;
    (seen_cores.insert({package, core}).second ? cpus : siblings).push_back(cpu);
  }
  cpus.insert(cpus.end(), siblings.begin(), siblings.end());
#endif
  return cpus;
}

// Pins the calling thread to `cpu`; failure is ignored (see pin_targets).
void pin_to(int cpu) {
#if defined(__linux__)
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  (void)pthread_setaffinity_np(pthread_self(), sizeof one, &one);
#else
  (void)cpu;
#endif
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(1, threads) - 1;
  workers_.reserve(workers);
  // Worker i takes the (i+1)-th target: the first is left to the calling
  // thread's core (the caller, a libuv thread, is not pinned).
  const std::vector<int> targets = pin_targets();
  try {
    for (int i = 0; i < workers; ++i) {
      const int cpu = i + 1 < static_cast<int>(targets.size()) ? targets[i + 1] : -1;
      workers_.emplace_back([this, i, cpu] {
        if (cpu >= 0) pin_to(cpu);
        worker_loop(i + 1);
      });
    }
  } catch (...) {
    // The OS refused a thread: stop and join those already started (a joinable
    // std::thread destroyed by the unwinding would call std::terminate).
    stop_workers();
    throw;
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}


void ThreadPool::run_chunks(int thread_index) {
  if (job_guided_) {
    const size_t share = 2 * static_cast<size_t>(size());
    size_t begin = next_.load();
    for (;;) {
      size_t chunk;
      do {
        if (begin >= job_size_) return;
        chunk = std::min(job_grain_, std::max<size_t>(1, (job_size_ - begin) / share));
      } while (!next_.compare_exchange_weak(begin, begin + chunk));
      job_.call(job_.fn, begin, std::min(job_size_, begin + chunk), thread_index);
      begin = next_.load();
    }
  }
  for (;;) {
    const size_t begin = next_.fetch_add(job_grain_);
    if (begin >= job_size_) return;
    job_.call(job_.fn, begin, std::min(job_size_, begin + job_grain_), thread_index);
  }
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    auto ready = [&] { return stopping_.load() || generation_.load(std::memory_order_acquire) != seen; };
    if (!spin_until(ready, kSpinMicros)) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, ready);
    }
    if (stopping_) return;
    seen = generation_.load(std::memory_order_acquire);
    run_chunks(index);
    if (active_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::run(size_t n, size_t grain, bool guided, Job job) {
  if (n == 0) return;
  grain = std::max<size_t>(1, grain);
  if (workers_.empty() || n <= (guided ? 1 : grain)) {
    job.call(job.fn, 0, n, 0);
    return;
  }
  job_ = job;
  job_size_ = n;
  job_grain_ = grain;
  job_guided_ = guided;
  next_.store(0);
  active_.store(static_cast<int>(workers_.size()));
  {
    // Bumped under the mutex so a worker about to sleep cannot miss it.
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  run_chunks(0);
  // Every worker must leave the job before fn (owned by the caller) goes away.
  auto finished = [&] { return active_.load() == 0; };
  if (!spin_until(finished, kSpinMicros)) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, finished);
  }
  job_ = Job{nullptr, nullptr};
}

}  // namespace weft

#include "thread_pool.h"

#include <algorithm>
#include <chrono>

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
}  // namespace

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(1, threads) - 1;
  workers_.reserve(workers);
  try {
    for (int i = 0; i < workers; ++i) workers_.emplace_back([this, i] { worker_loop(i + 1); });
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
  for (;;) {
    const size_t begin = next_.fetch_add(job_grain_);
    if (begin >= job_size_) return;
    (*job_)(begin, std::min(job_size_, begin + job_grain_), thread_index);
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

void ThreadPool::parallel_for(size_t n, size_t grain, const RangeFn& fn) {
  if (n == 0) return;
  grain = std::max<size_t>(1, grain);
  if (workers_.empty() || n <= grain) {
    fn(0, n, 0);
    return;
  }
  job_ = &fn;
  job_size_ = n;
  job_grain_ = grain;
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
  job_ = nullptr;
}

}  // namespace weft

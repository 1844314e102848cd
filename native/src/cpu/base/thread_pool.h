// A small persistent thread pool. The calling thread takes part in the work, so
// a pool of N threads starts N - 1 workers. One parallel_for runs at a time
// (the model runs one step at a time).
//
// A forward pass calls parallel_for ~10 times per layer, so waking workers must
// be cheap: between jobs a worker spins briefly on the job counter before it
// sleeps on a condition variable.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace weft {

class ThreadPool {
 public:
  // fn(begin, end, thread_index): process items [begin, end); thread_index < size().
  // parallel_for takes any callable with that signature (a lambda, a
  // std::function) by reference: nothing is copied or allocated per call.
  using RangeFn = std::function<void(size_t, size_t, int)>;

  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn over [0, n) in chunks of `grain` items handed out dynamically, and
  // returns when every item is done. Which thread runs which chunk varies, so fn
  // must compute each item the same way whoever runs it (that keeps results
  // identical across thread counts and batch shapes). n <= grain runs inline.
  template <class Fn>
  void parallel_for(size_t n, size_t grain, const Fn& fn) {
    run(n, grain, false, Job{&fn, [](const void* f, size_t b, size_t e, int t) { (*static_cast<const Fn*>(f))(b, e, t); }});
  }

  // The same with chunks that shrink as the work runs out ("guided"): each
  // takes 1 / (2 * size()) of the items left, at most max_chunk, at least
  // one. Far fewer hand-offs than fixed chunks for the same balance at the
  // end: for one-token matmuls, where every hand-off (an atomic on a line
  // the threads share) costs about as much as a small chunk's work. The
  // same rule as parallel_for: fn must not depend on how items are chunked.
  template <class Fn>
  void parallel_for_guided(size_t n, size_t max_chunk, const Fn& fn) {
    run(n, max_chunk, true, Job{&fn, [](const void* f, size_t b, size_t e, int t) { (*static_cast<const Fn*>(f))(b, e, t); }});
  }

 private:
  // A borrowed callable: the caller's object and how to call it.
  struct Job {
    const void* fn;
    void (*call)(const void* fn, size_t begin, size_t end, int thread);
  };
  void run(size_t n, size_t grain, bool guided, Job job);
  void worker_loop(int index);
  void run_chunks(int thread_index);
  void stop_workers();  // joins every started worker

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<uint64_t> generation_{0};  // bumped (under mutex_) for every job
  std::atomic<int> active_{0};           // workers still inside the current job
  std::atomic<bool> stopping_{false};

  // The current job, published before generation_ is bumped.
  Job job_{nullptr, nullptr};
  size_t job_size_ = 0;
  size_t job_grain_ = 1;     // the chunk, or (guided) the largest chunk
  bool job_guided_ = false;
  std::atomic<size_t> next_{0};
};

}  // namespace weft

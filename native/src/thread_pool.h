// A persistent pool of worker threads for data-parallel loops.
//
// Kernels split their work into tasks and call run(); the calling thread works too, so a pool of
// size n starts n - 1 threads. Workers spin briefly before sleeping: decoding calls the pool
// thousands of times a second, and a futex wake per call would cost more than small kernels do.
// A run() issued from inside a task (a kernel calling a kernel) runs serially on that thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sw {

class ThreadPool {
 public:
  // threads <= 0: one per hardware thread.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(task, worker) for every task in [0, tasks), spread over the pool; worker is in
  // [0, size()) and names the thread (for per-thread scratch buffers). Returns when all are done.
  void run(int64_t tasks, const std::function<void(int64_t task, int worker)>& fn);

  // Splits [0, n) into about size() contiguous chunks (at least `grain` long) and calls
  // fn(begin, end, worker) on each.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn);

 private:
  void worker_loop(int index);
  void work(int worker);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t, int)>* job_ = nullptr;
  int64_t tasks_ = 0;
  std::atomic<int64_t> next_{0};
  // Workers join a job only while it is open; the caller closes it once every task is claimed
  // and waits only for workers that joined, so a worker the OS has not scheduled never delays
  // the caller (it would otherwise wait for it to wake up just to find nothing left to do).
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> open_{0};
  std::atomic<int> active_{0};
  bool stop_ = false;
  std::mutex run_mutex_;  // one run() at a time from outside the pool
};

}  // namespace sw

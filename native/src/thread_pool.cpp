#include "thread_pool.h"

#include <algorithm>
#include <chrono>

namespace sw {

namespace {
// Set on pool threads and on a caller while it runs a job: nested run() calls go serial.
thread_local bool in_pool_task = false;

// How long a thread busy-waits for the next job (or for the others to finish) before sleeping.
// The wait is a plain load loop: the x86 PAUSE hint makes hypervisors (KVM's pause-loop exiting)
// deschedule the virtual CPU, which turned each wait into a millisecond.
constexpr auto kSpin = std::chrono::microseconds(300);

template <typename Pred>
bool spin_until(Pred done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 256; i++)
      if (done()) return true;
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; i++) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::work(int worker) {
  const auto& fn = *job_;
  for (;;) {
    int64_t task = next_.fetch_add(1, std::memory_order_relaxed);
    if (task >= tasks_) break;
    fn(task, worker);
  }
}

void ThreadPool::worker_loop(int index) {
  in_pool_task = true;
  uint64_t seen = 0;
  for (;;) {
    // Spin first: a new job usually follows within microseconds during decoding.
    if (!spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen || stop_; });
    }
    if (stop_) return;
    seen = generation_.load(std::memory_order_acquire);
    active_.fetch_add(1, std::memory_order_seq_cst);
    if (open_.load(std::memory_order_seq_cst) == seen) work(index);
    if (active_.fetch_sub(1, std::memory_order_seq_cst) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::run(int64_t tasks, const std::function<void(int64_t, int)>& fn) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1 || in_pool_task) {
    for (int64_t t = 0; t < tasks; t++) fn(t, 0);
    return;
  }
  std::lock_guard<std::mutex> serial(run_mutex_);
  in_pool_task = true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    tasks_ = tasks;
    next_.store(0, std::memory_order_relaxed);
    const uint64_t g = generation_.load(std::memory_order_relaxed) + 1;
    open_.store(g, std::memory_order_seq_cst);
    generation_.store(g, std::memory_order_release);
  }
  wake_.notify_all();
  work(0);
  // Every task is claimed: close the job, then wait for the workers still running one.
  open_.store(0, std::memory_order_seq_cst);
  if (!spin_until([&] { return active_.load(std::memory_order_seq_cst) == 0; })) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return active_.load() == 0; });
  }
  job_ = nullptr;
  in_pool_task = false;
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::min<int64_t>(size(), (n + grain - 1) / grain);
  if (chunks <= 1 || in_pool_task) {
    fn(0, n, 0);
    return;
  }
  int64_t per = (n + chunks - 1) / chunks;
  run(chunks, [&](int64_t c, int worker) {
    int64_t b = c * per, e = std::min(n, b + per);
    if (b < e) fn(b, e, worker);
  });
}

}  // namespace sw

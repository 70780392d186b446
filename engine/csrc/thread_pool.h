// A fork-join pool that never waits for a thread that has not started work.
//
// `run(num_tasks, fn)` publishes a phase; the calling thread and the workers claim task indices
// from one counter and the caller returns once every claimed task is done. A worker that is
// descheduled (the machine is busy: a browser, a test runner, another server) simply claims
// nothing and the caller does its share, so a phase costs at most one task's delay instead of a
// barrier waiting out a scheduler time slice (what made OpenMP's barriers 10-20x slower under
// load here). Idle workers spin briefly, then yield, then sleep on a condition variable.
// The claim counter packs (phase, index) in 64 bits so a worker that wakes late can never claim
// a task of a phase it has not seen published.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace crescent {

class ThreadPool {
 public:
  using TaskFn = void (*)(void* ctx, int task, int thread);

  // num_threads counts the caller: num_threads - 1 workers are started.
  explicit ThreadPool(int num_threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(ctx, task, thread) for task in [0, num_tasks) across the pool; thread is 0 for the
  // caller and 1.. for workers. Returns when every task is done. Not reentrant.
  void run(int num_tasks, TaskFn fn, void* ctx);

  template <class F>
  void parallel_for(int num_tasks, F&& f) {
    if (num_tasks <= 0) return;
    if (num_tasks == 1 || workers_.empty()) {
      for (int i = 0; i < num_tasks; ++i) f(i, 0);
      return;
    }
    run(num_tasks, [](void* c, int task, int thread) { (*static_cast<F*>(c))(task, thread); }, &f);
  }

 private:
  void worker_loop(int thread);
  bool claim_and_run(uint32_t phase, int thread);

  // One phase's task; phase p lives in slot p % 2, so the caller fills the next phase's slot
  // while a late worker may still read the current one (its claim then fails on the ticket).
  struct Slot {
    std::atomic<TaskFn> fn{nullptr};
    std::atomic<void*> ctx{nullptr};
    std::atomic<int> num_tasks{0};
  };

  std::vector<std::thread> workers_;
  std::atomic<uint64_t> ticket_{0};   // (phase << 32) | next task index
  std::atomic<int> done_{0};          // tasks finished in the current phase
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  Slot slots_[2];
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace crescent

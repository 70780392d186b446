#include "thread_pool.h"

#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CRESCENT_PAUSE() _mm_pause()
#else
#define CRESCENT_PAUSE() ((void)0)
#endif

namespace crescent {

namespace {
constexpr int kSpins = 4000;   // pause loops before yielding (~0.1 ms)
constexpr int kYields = 200;   // sched_yield calls before sleeping

uint32_t phase_of(uint64_t ticket) { return static_cast<uint32_t>(ticket >> 32); }
}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  for (int t = 1; t < num_threads; ++t) workers_.emplace_back([this, t] { worker_loop(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  {
    std::lock_guard<std::mutex> lock(mutex_);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

// Claims tasks of `phase` until none is left; false when the phase has moved on.
bool ThreadPool::claim_and_run(uint32_t phase, int thread) {
  const Slot& slot = slots_[phase & 1];
  for (;;) {
    uint64_t t = ticket_.load(std::memory_order_acquire);
    if (phase_of(t) != phase) return false;
    const int total = slot.num_tasks.load(std::memory_order_relaxed);
    const int index = static_cast<int>(t & 0xffffffffu);
    if (index >= total) return true;
    if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel)) continue;
    slot.fn.load(std::memory_order_relaxed)(slot.ctx.load(std::memory_order_relaxed), index, thread);
    done_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::run(int num_tasks, TaskFn fn, void* ctx) {
  const uint32_t phase = phase_of(ticket_.load(std::memory_order_relaxed)) + 1;
  Slot& slot = slots_[phase & 1];
  slot.fn.store(fn, std::memory_order_relaxed);
  slot.ctx.store(ctx, std::memory_order_relaxed);
  slot.num_tasks.store(num_tasks, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  // seq_cst store then load, against the worker's seq_cst increment then load: one of the two
  // sees the other, so a worker going to sleep is either woken or sees the new phase.
  ticket_.store(static_cast<uint64_t>(phase) << 32);
  if (sleepers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  claim_and_run(phase, 0);
  // Tasks a worker claimed may still be running: wait for them only.
  for (int spins = 0; done_.load(std::memory_order_acquire) < num_tasks; ++spins) {
    if (spins < kSpins) CRESCENT_PAUSE();
    else sched_yield();
  }
}

void ThreadPool::worker_loop(int thread) {
  uint32_t seen = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint32_t phase = phase_of(ticket_.load(std::memory_order_acquire));
    if (phase != seen) {
      seen = phase;
      claim_and_run(phase, thread);
      continue;
    }
    // Wait for the next phase: spin, then yield, then sleep.
    int waited = 0;
    while (phase_of(ticket_.load(std::memory_order_acquire)) == seen && !stop_.load(std::memory_order_relaxed)) {
      if (waited < kSpins) {
        CRESCENT_PAUSE();
      } else if (waited < kSpins + kYields) {
        sched_yield();
      } else {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return phase_of(ticket_.load()) != seen || stop_.load(); });
        sleepers_.fetch_sub(1, std::memory_order_acq_rel);
        break;
      }
      ++waited;
    }
  }
}

}  // namespace crescent

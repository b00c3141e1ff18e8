#include "scripting/script_thread.h"

#include <utility>

namespace latch::scripting {

bool ScriptThread::Post(Task run, Task refuse) {
  std::lock_guard lock(mu_);
  if (busy_.load(std::memory_order_relaxed)) return false;
  queue_.push_back(Entry{std::move(run), std::move(refuse)});
  // During a Stop() the old thread may still run its last task: the new one starts after.
  if (!thread_.joinable() && !stopping_) StartLocked();
  cv_.notify_one();
  return true;
}

void ScriptThread::RefuseQueued() {
  std::deque<Entry> refused;
  {
    std::lock_guard lock(mu_);
    refused.swap(queue_);
  }
  for (Entry& e : refused) e.refuse();
}

// The thread is taken out under the mutex and joined outside it, and the generation ends
// exactly that thread: a Post() meanwhile never reads or replaces a thread being joined (a
// Post() between the join and the reset used to start a thread the reset then assigned over:
// std::terminate), and its task is never left in a queue no thread serves (one queued just
// before the join used to be dropped after the old thread quit: its client never answered).
void ScriptThread::Stop() {
  std::lock_guard serial(stop_mu_);
  std::thread old;
  std::deque<Entry> dropped;
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) return;
    old = std::move(thread_);
    ++generation_;
    stopping_ = true;
    dropped.swap(queue_);
  }
  cv_.notify_all();
  old.join();
  std::lock_guard lock(mu_);
  stopping_ = false;
  if (!queue_.empty()) StartLocked();  // posted while the old thread ended
}

void ScriptThread::StartLocked() {
  thread_ = std::thread([this, generation = generation_] { Loop(generation); });
}

void ScriptThread::Loop(std::uint64_t generation) {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return generation_ != generation || !queue_.empty(); });
    if (generation_ != generation) return;
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    e.run();
    e = Entry{};  // the task's captures go before the next wait
    lock.lock();
  }
}

}  // namespace latch::scripting

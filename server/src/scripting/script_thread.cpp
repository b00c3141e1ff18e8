#include "scripting/script_thread.h"

#include <utility>

namespace latch::scripting {

bool ScriptThread::Post(Task run, Task refuse) {
  std::lock_guard lock(mu_);
  if (busy_.load(std::memory_order_relaxed)) return false;
  if (!thread_.joinable()) {
    stop_ = false;
    thread_ = std::thread([this] { Loop(); });
  }
  queue_.push_back(Entry{std::move(run), std::move(refuse)});
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

void ScriptThread::Stop() {
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
  std::deque<Entry> dropped;
  {
    std::lock_guard lock(mu_);
    dropped.swap(queue_);
    thread_ = std::thread();
  }
}

void ScriptThread::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    e.run();
    e = Entry{};  // the task's captures go before the next wait
    lock.lock();
  }
}

}  // namespace latch::scripting

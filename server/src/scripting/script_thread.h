#pragma once
// The thread that runs every Lua script sent by a client (ScriptEngine), so that an io
// thread never runs one: while a script runs, the clients of its worker (its own client
// included, to see a disconnect) are still read and answered (BUSY past the threshold,
// SCRIPT KILL, SHUTDOWN NOSAVE), as Redis's single thread answers them between hook calls.
//
// One thread, started by the first Post() (again after Stop()), runs the queued tasks in
// order, one at a time. A task is a pair: `run` on this thread, or `refuse` instead (on the
// thread calling RefuseQueued) when a script goes busy while the task waits its turn, as a
// client sending EVAL to a busy Redis is answered BUSY.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace latch::scripting {

class ScriptThread {
 public:
  using Task = std::function<void()>;

  // `busy`: ServerState::script_busy; a Post() while it is set is refused.
  explicit ScriptThread(const std::atomic<bool>& busy) : busy_(busy) {}
  ~ScriptThread() { Stop(); }
  ScriptThread(const ScriptThread&) = delete;
  ScriptThread& operator=(const ScriptThread&) = delete;

  // Any thread, at any time (a Stop() under way included). Queues the task and returns true;
  // false (nothing queued) while a script is busy. Checked under the queue's mutex, so a
  // task is either refused here or reached by the RefuseQueued() that follows the flag
  // being set. A task that returned true is run, refused, or dropped by a Stop() that began
  // after it was queued: never lost otherwise.
  bool Post(Task run, Task refuse);
  // Called right after script_busy is set: every queued task gets its `refuse`.
  void RefuseQueued();
  // Joins the thread after its current task (the caller has had any running script killed);
  // the tasks queued when it is called are dropped without running either function. A task
  // posted while it waits for the join runs afterwards, on a new thread started once the
  // old one has ended (two never run at once). Any thread but the script thread; concurrent
  // calls take turns.
  void Stop();
  // True while a Stop() waits for the thread (tests).
  bool stopping() const {
    std::lock_guard lock(mu_);
    return stopping_;
  }

 private:
  struct Entry {
    Task run, refuse;
  };
  // Starts the thread of generation `generation_`. Under mu_, with no thread running.
  void StartLocked();
  void Loop(std::uint64_t generation);

  const std::atomic<bool>& busy_;
  std::mutex stop_mu_;  // one Stop() at a time
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> queue_;
  // Each thread runs until the generation moves past its own: a Stop() ends exactly the
  // thread it took, whatever a Post() starts meanwhile.
  std::uint64_t generation_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // under mu_; a Stop() takes it out to join it
};

}  // namespace latch::scripting

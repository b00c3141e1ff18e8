#pragma once
// The thread that runs every Lua script sent by a client (ScriptEngine), so that an io
// thread never runs one: while a script runs, the clients of its worker (its own client
// included, to see a disconnect) are still read and answered (BUSY past the threshold,
// SCRIPT KILL, SHUTDOWN NOSAVE), as Redis's single thread answers them between hook calls.
//
// One thread, started by the first Post() (again after Stop()), runs the queued tasks in
// order. A task is a pair: `run` on this thread, or `refuse` instead (on the thread calling
// RefuseQueued) when a script goes busy while the task waits its turn, as a client sending
// EVAL to a busy Redis is answered BUSY.
#include <atomic>
#include <condition_variable>
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

  // Any thread. Queues the task and returns true; false (nothing queued) while a script is
  // busy. Checked under the queue's mutex, so a task is either refused here or reached by
  // the RefuseQueued() that follows the flag being set.
  bool Post(Task run, Task refuse);
  // Called right after script_busy is set: every queued task gets its `refuse`.
  void RefuseQueued();
  // Joins the thread after its current task (the caller has had any running script killed);
  // queued tasks are dropped without running either function. Not from the thread itself.
  void Stop();

 private:
  struct Entry {
    Task run, refuse;
  };
  void Loop();

  const std::atomic<bool>& busy_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> queue_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace latch::scripting

#pragma once
// The Client's insides: the I/O thread, its io_context and the connection pool. Shared with
// the lock layer (client/src), which runs its coroutines on this executor.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "connection.h"
#include "leader_view.h"
#include "latch/client.h"

namespace latch {

class ClientImpl {
 public:
  explicit ClientImpl(ClientOptions options);
  ~ClientImpl();

  // Any thread. The call's callback runs on the I/O thread.
  void Submit(std::vector<Command> cmds, CallOptions options, Client::PipelineCallback done);
  std::optional<Capabilities> capabilities() const;
  const ClientOptions& options() const { return options_; }
  boost::asio::any_io_executor executor() { return ctx_.get_executor(); }
  bool on_io_thread() const { return std::this_thread::get_id() == thread_id_; }

 private:
  void Shutdown();
  // Closes idle blocking connections beyond options_.max_idle_blocking. I/O thread only.
  void TrimBlockingPool();

  // Declared first: destroyed last, after everything bound to it.
  boost::asio::io_context ctx_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  ClientOptions options_;
  std::unique_ptr<client_internal::LeaderView> leaders_;  // several nodes only
  std::shared_ptr<client_internal::Connection> NewConnection();

  std::vector<std::shared_ptr<client_internal::Connection>> pool_;
  // Connections for blocking calls, one call at a time each; I/O thread only.
  std::vector<std::shared_ptr<client_internal::Connection>> blocking_pool_;
  std::size_t next_ = 0;  // round-robin start among equally loaded connections
  mutable std::mutex caps_mu_;
  std::optional<Capabilities> caps_;
  std::random_device seed_;  // I/O thread and constructor only
  std::atomic<bool> closed_{false};
  std::thread thread_;
  std::thread::id thread_id_;
};

}  // namespace latch

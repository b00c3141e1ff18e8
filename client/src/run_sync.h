#pragma once
// Runs one of the lock layer's coroutines to completion on the client's I/O thread and
// blocks the calling thread until it is done (bounded by the calls' timeouts inside it).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include "client_impl.h"

namespace latch::client_internal {

template <class T>
Result<T> RunSync(ClientImpl& impl, Awaitable<Result<T>> task) {
  if (impl.on_io_thread()) {
    return Result<T>(Errc::kInvalidArgument, "blocking call on the client's I/O thread");
  }
  return boost::asio::co_spawn(impl.executor(), std::move(task), boost::asio::use_future).get();
}

}  // namespace latch::client_internal

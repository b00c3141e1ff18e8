#pragma once
// Bridges the client's callback calls into Asio coroutines: the awaiting coroutine resumes on
// its own executor, whichever thread ran the callback.
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <memory>

#include "latch/result.h"

namespace latch::client_internal {

// start(done) must call done(Result<T>) exactly once, from any thread.
template <class T, class Start>
boost::asio::awaitable<Result<T>> AwaitCallback(Start start) {
  namespace asio = boost::asio;
  co_return co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(Result<T>)>(
      [start = std::move(start)](auto handler) mutable {
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        start([h](Result<T> r) {
          auto ex = asio::get_associated_executor(*h);
          asio::post(ex, [h, r = std::move(r)]() mutable { std::move (*h)(std::move(r)); });
        });
      },
      asio::use_awaitable);
}

}  // namespace latch::client_internal

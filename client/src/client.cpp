#include "latch/client.h"

#include <boost/asio/post.hpp>
#include <future>

#include "await.h"
#include "client_impl.h"

namespace latch {
namespace asio = boost::asio;
using client_internal::AwaitCallback;
using client_internal::Connection;
using client_internal::PendingCall;

Result<ClientOptions> ClientOptions::FromUrl(std::string_view url) {
  // Several hosts: the part between the scheme (and user info) and the path is a comma list;
  // each host is parsed as a URL of its own with the same scheme, user info and path.
  const std::size_t scheme_end = url.find("://");
  const std::size_t hosts_start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  std::size_t hosts_end = url.find('/', hosts_start);
  if (hosts_end == std::string_view::npos) hosts_end = url.size();
  std::size_t at = url.substr(0, hosts_end).rfind('@');
  const std::size_t list_start =
      at == std::string_view::npos || at < hosts_start ? hosts_start : at + 1;
  const std::string_view hosts = url.substr(list_start, hosts_end - list_start);
  ClientOptions o;
  std::size_t from = 0;
  do {
    std::size_t comma = hosts.find(',', from);
    if (comma == std::string_view::npos) comma = hosts.size();
    std::string one(url.substr(0, list_start));
    one.append(hosts.substr(from, comma - from)).append(url.substr(hosts_end));
    auto ep = Endpoint::Parse(one);
    if (!ep.ok()) return ep.error();
    o.nodes.push_back(std::move(ep.value()));
    from = comma + 1;
  } while (from <= hosts.size());
  o.endpoint = o.nodes.front();
  if (o.nodes.size() == 1) o.nodes.clear();
  return o;
}

ClientImpl::ClientImpl(ClientOptions options)
    : work_(ctx_.get_executor()), options_(std::move(options)) {
  if (options_.pool_size == 0) options_.pool_size = 1;
  if (options_.nodes.size() > 1) {
    leaders_ = std::make_unique<client_internal::LeaderView>(options_.nodes);
  }
  for (std::size_t i = 0; i < options_.pool_size; ++i) pool_.push_back(NewConnection());
  std::promise<std::thread::id> started;
  auto id = started.get_future();
  thread_ = std::thread([this, &started] {
    started.set_value(std::this_thread::get_id());
    ctx_.run();
  });
  thread_id_ = id.get();
}

ClientImpl::~ClientImpl() { Shutdown(); }

std::shared_ptr<Connection> ClientImpl::NewConnection() {
  std::uint64_t s = (std::uint64_t{seed_()} << 32) ^ seed_();
  return std::make_shared<Connection>(ctx_, options_, leaders_.get(), s,
                                      [this](const Capabilities& c) {
                                        std::lock_guard lock(caps_mu_);
                                        caps_ = c;
                                      });
}

void ClientImpl::Shutdown() {
  if (closed_.exchange(true)) return;
  std::promise<void> done;
  asio::post(ctx_, [this, &done] {
    Error closed{make_error_code(Errc::kClientClosed), ""};
    for (auto& c : pool_) c->Shutdown(closed);
    for (auto& c : blocking_pool_) c->Shutdown(closed);
    done.set_value();
  });
  done.get_future().wait();
  // Coroutines still suspended (a lock renewal that outlived its Client) are destroyed with
  // the io_context; the pool goes first so that nothing outlives the context it is bound to.
  work_.reset();
  ctx_.stop();
  thread_.join();
  pool_.clear();
  blocking_pool_.clear();
}

void ClientImpl::TrimBlockingPool() {
  if (closed_.load()) return;
  std::size_t idle = 0;
  Error trimmed{make_error_code(Errc::kClientClosed), "idle blocking connection closed"};
  std::erase_if(blocking_pool_, [&](const std::shared_ptr<client_internal::Connection>& c) {
    if (c->load() != 0 || ++idle <= options_.max_idle_blocking) return false;
    c->Shutdown(trimmed);
    return true;
  });
}

void ClientImpl::Submit(std::vector<Command> cmds, CallOptions options,
                        Client::PipelineCallback done) {
  auto call = std::make_shared<PendingCall>();
  for (const auto& c : cmds) c.AppendTo(&call->bytes);
  call->expected = cmds.size();
  call->done = std::move(done);
  call->timeout = options.timeout.count() > 0 ? options.timeout : options_.call_timeout;
  if (cmds.empty()) {
    call->Finish(std::vector<Reply>{});
    return;
  }
  if (closed_.load()) {
    call->Finish(Error{make_error_code(Errc::kClientClosed), ""});
    return;
  }
  if (options.blocking) {
    // Once the call is done, its connection may be one idle connection too many.
    call->done = [this, done = std::move(call->done)](Result<std::vector<Reply>> r) {
      done(std::move(r));
      if (!closed_.load()) asio::post(ctx_, [this] { TrimBlockingPool(); });
    };
    asio::post(ctx_, [this, call] {
      for (auto& c : blocking_pool_) {
        if (c->load() == 0) return c->Submit(call);
      }
      blocking_pool_.push_back(NewConnection());
      blocking_pool_.back()->Submit(call);
    });
    return;
  }
  asio::post(ctx_, [this, call] {
    // Least loaded connection; ties go round-robin so an idle pool spreads its calls.
    std::size_t best = next_ % pool_.size();
    for (std::size_t i = 0; i < pool_.size(); ++i) {
      std::size_t j = (next_ + i) % pool_.size();
      if (pool_[j]->load() < pool_[best]->load()) best = j;
    }
    ++next_;
    pool_[best]->Submit(call);
  });
}

std::optional<Capabilities> ClientImpl::capabilities() const {
  std::lock_guard lock(caps_mu_);
  return caps_;
}

Client::Client(ClientOptions options) : impl_(std::make_unique<ClientImpl>(std::move(options))) {}
Client::~Client() = default;

const ClientOptions& Client::options() const { return impl_->options(); }

void Client::async_pipeline(std::vector<Command> cmds, CallOptions options, PipelineCallback done) {
  impl_->Submit(std::move(cmds), options, std::move(done));
}

void Client::async_execute(Command cmd, CallOptions options, Callback done) {
  std::vector<Command> cmds;
  cmds.push_back(std::move(cmd));
  impl_->Submit(std::move(cmds), options, [done = std::move(done)](Result<std::vector<Reply>> r) {
    if (!r.ok()) return done(r.error());
    done(std::move(r.value().front()));
  });
}

Awaitable<Result<Reply>> Client::execute(Command cmd, CallOptions options) {
  ClientImpl* impl = impl_.get();
  std::vector<Command> cmds;
  cmds.push_back(std::move(cmd));
  auto r = co_await AwaitCallback<std::vector<Reply>>(
      [impl, &cmds, options](auto done) { impl->Submit(std::move(cmds), options, done); });
  if (!r.ok()) co_return r.error();
  co_return std::move(r.value().front());
}

Awaitable<Result<std::vector<Reply>>> Client::pipeline(std::vector<Command> cmds,
                                                       CallOptions options) {
  ClientImpl* impl = impl_.get();
  co_return co_await AwaitCallback<std::vector<Reply>>(
      [impl, &cmds, options](auto done) { impl->Submit(std::move(cmds), options, done); });
}

Result<std::vector<Reply>> Client::pipeline_sync(std::vector<Command> cmds, CallOptions options) {
  if (impl_->on_io_thread()) {
    return Result<std::vector<Reply>>(Errc::kInvalidArgument,
                                      "blocking call on the client's I/O thread");
  }
  auto promise = std::make_shared<std::promise<Result<std::vector<Reply>>>>();
  auto future = promise->get_future();
  impl_->Submit(std::move(cmds), options,
                [promise](Result<std::vector<Reply>> r) { promise->set_value(std::move(r)); });
  // Bounded: every call completes by its timeout at the latest.
  return future.get();
}

Result<Reply> Client::execute_sync(Command cmd, CallOptions options) {
  std::vector<Command> cmds;
  cmds.push_back(std::move(cmd));
  auto r = pipeline_sync(std::move(cmds), options);
  if (!r.ok()) return r.error();
  return std::move(r.value().front());
}

Awaitable<Result<Capabilities>> Client::capabilities() {
  if (auto caps = impl_->capabilities()) co_return *caps;
  // The handshake of the connection that carries this PING records the capabilities.
  auto r = co_await execute(Command("PING"));
  if (!r.ok()) co_return r.error();
  if (auto caps = impl_->capabilities()) co_return *caps;
  co_return Result<Capabilities>(Errc::kUnexpectedReply, "no capabilities after PING");
}

}  // namespace latch

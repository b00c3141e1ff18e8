#include "service.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "adapters/http_api.h"
#include "adapters/http_server.h"
#include "adapters/latch_seat_locks.h"
#include "adapters/pg_store.h"
#include "app/reservation_service.h"

namespace latch::demo {
namespace {

constexpr std::size_t kLockConnections = 4;  // the lock client's pool (pipelined connections)
constexpr std::size_t kWarmPostgresConnections = 4;

}  // namespace

// Declaration order is construction order; destruction runs backwards (server first).
struct Service::Parts {
  PgPool pool;
  PgStore store;
  std::unique_ptr<Client> lock_client;
  std::unique_ptr<LatchSeatLocks> locks;
  ReservationService service;
  HttpApi api;
  HttpServer http;
  std::thread sweeper;
  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;

  Parts(const ServiceOptions& o, std::unique_ptr<Client> client)
      : pool(o.pg_conninfo, o.pg_pool, std::chrono::milliseconds(5000)),
        store(pool),
        lock_client(std::move(client)),
        locks(lock_client && o.lock_seats
                  ? std::make_unique<LatchSeatLocks>(*lock_client, o.lock_ttl, o.lock_wait)
                  : nullptr),
        service(store, locks.get(), o.hold),
        api(service, store, locks.get()),
        http(HttpServerOptions{o.bind, o.port, o.workers, o.body_limit,
                               std::chrono::milliseconds(30000), o.access_log},
             [this](const HttpRequest& r) { return api.Handle(r); }) {}

  // Opens every connection of the lock client's pool now: one PING per connection, sent
  // together (the client gives each call to its least loaded connection). Without this a
  // fresh instance opens them during its first burst of bookings, and those requests reach
  // the lock server late: after a stampede's winner has released the seat, so that they get
  // through the lock and are refused by PostgreSQL instead. Bounded by the call timeout.
  void WarmLockClient(std::size_t connections) {
    if (!lock_client || !locks) return;
    auto left = std::make_shared<std::atomic<std::size_t>>(connections);
    auto done = std::make_shared<std::promise<void>>();
    auto finished = done->get_future();
    for (std::size_t i = 0; i < connections; ++i) {
      lock_client->async_execute(Command("PING"), CallOptions{}, [left, done](Result<Reply>) {
        if (left->fetch_sub(1) == 1) done->set_value();
      });
    }
    finished.wait();
  }

  void Sweep(std::chrono::milliseconds interval) {
    std::unique_lock lock(mu);
    while (!wake.wait_for(lock, interval, [&] { return stopping; })) {
      lock.unlock();
      service.ExpireHolds();  // failures (PostgreSQL down) are retried on the next tick
      lock.lock();
    }
  }
};

Service::Service(ServiceOptions options) : options_(std::move(options)) {}

Service::~Service() { Stop(); }

int Service::Start() {
  if (parts_) throw std::runtime_error("service already started");
  auto client_options = ClientOptions::FromUrl(options_.lock_url);
  if (!client_options.ok()) {
    throw std::runtime_error("bad lock URL \"" + options_.lock_url +
                             "\": " + client_options.error().ToString());
  }
  client_options->client_name = "latch-reservation";
  client_options->pool_size = kLockConnections;
  client_options->call_timeout = options_.lock_call_timeout;
  client_options->connect_timeout = options_.lock_call_timeout;
  client_options->backoff_max = std::chrono::milliseconds(500);
  parts_ = std::make_unique<Parts>(options_, std::make_unique<Client>(*client_options));
  auto schema = ApplySchema(parts_->pool);
  if (!schema.ok()) {
    parts_.reset();
    throw std::runtime_error("cannot prepare the database: " + schema.error().message);
  }
  // A started instance answers its first requests as fast as its later ones: PostgreSQL and
  // lock server connections are opened now, not by the first burst of requests.
  if (options_.warm_connections) {
    parts_->pool.Warm(std::min<std::size_t>(options_.pg_pool, kWarmPostgresConnections));
    parts_->WarmLockClient(kLockConnections);
  }
  int port = parts_->http.Start();
  if (options_.sweep_interval.count() > 0) {
    parts_->sweeper = std::thread([p = parts_.get(), i = options_.sweep_interval] { p->Sweep(i); });
  }
  return port;
}

void Service::Stop() {
  if (!parts_) return;
  {
    std::lock_guard lock(parts_->mu);
    parts_->stopping = true;
  }
  parts_->wake.notify_all();
  if (parts_->sweeper.joinable()) parts_->sweeper.join();
  parts_->http.Stop();
  parts_.reset();
}

int Service::port() const { return parts_ ? parts_->http.port() : 0; }

}  // namespace latch::demo

#include "service.h"

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "adapters/http_api.h"
#include "adapters/http_server.h"
#include "adapters/latch_seat_locks.h"
#include "adapters/pg_store.h"
#include "app/reservation_service.h"

namespace latch::demo {

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
        http(HttpServerOptions{o.bind, o.port, o.workers, o.body_limit},
             [this](const HttpRequest& r) { return api.Handle(r); }) {}

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
  client_options->pool_size = 4;
  client_options->call_timeout = options_.lock_call_timeout;
  client_options->connect_timeout = options_.lock_call_timeout;
  client_options->backoff_max = std::chrono::milliseconds(500);
  parts_ = std::make_unique<Parts>(options_, std::make_unique<Client>(*client_options));
  auto schema = ApplySchema(parts_->pool);
  if (!schema.ok()) {
    parts_.reset();
    throw std::runtime_error("cannot prepare the database: " + schema.error().message);
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

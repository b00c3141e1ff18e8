#pragma once
// The ReservationStore port on PostgreSQL (libpq). Schema: pg_schema.cpp, applied by
// ApplySchema() at start-up (idempotent, safe when several instances start at once).
#include "adapters/pg_pool.h"
#include "app/ports.h"

namespace latch::demo {

// Creates the tables and indexes if they do not exist.
Outcome<Unit> ApplySchema(PgPool& pool);

class PgStore : public ReservationStore {
 public:
  explicit PgStore(PgPool& pool) : pool_(pool) {}

  Outcome<std::unique_ptr<ReservationTx>> Begin() override;
  Outcome<Event> CreateEvent(const std::string& name, SeatNo seat_count) override;
  Outcome<Event> GetEvent(EventId id) override;
  Outcome<SeatPage> AvailableSeats(EventId id, std::int64_t offset, std::int64_t limit) override;
  Outcome<Reservation> GetReservation(ReservationId id) override;
  Outcome<std::int64_t> ExpireDueHolds() override;
  Outcome<Unit> Ping() override;

 private:
  // A connection with BEGIN done. A pooled connection that the server closed while it was
  // idle fails its first statement: it is dropped and BEGIN retried once on a fresh one.
  Outcome<PgPool::Conn> BeginOn();

  PgPool& pool_;
};

}  // namespace latch::demo

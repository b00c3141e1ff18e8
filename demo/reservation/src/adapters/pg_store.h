#pragma once
// The ReservationStore port on PostgreSQL (libpq). Schema: pg_schema.cpp, applied by
// ApplySchema() at start-up (idempotent, safe when several instances start at once); SQL:
// pg_statements.cpp. Reads are one statement in one round trip, outside any transaction; a
// transaction sends BEGIN with its first statements and COMMIT with its last (PgPipeline).
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
  Outcome<SeatPage> AvailableSeats(EventId id, SeatNo after, std::int64_t offset,
                                   std::int64_t limit) override;
  Outcome<SeatMap> Seats(EventId id, SeatNo first, SeatNo last) override;
  Outcome<Reservation> GetReservation(ReservationId id) override;
  Outcome<std::int64_t> ExpireDueHolds() override;
  Outcome<Unit> Ping() override;

 private:
  PgPool& pool_;
};

}  // namespace latch::demo

// The schema, created at start-up. All statements are idempotent; the advisory lock makes
// instances that start together apply it one after the other (concurrent CREATE ... IF NOT
// EXISTS can otherwise fail on the catalog's unique indexes).
#include "adapters/pg_store.h"

namespace latch::demo {
namespace {

constexpr const char* kSchema = R"sql(
BEGIN;
SELECT pg_advisory_xact_lock(7406351);
CREATE TABLE IF NOT EXISTS events (
  id          bigserial PRIMARY KEY,
  name        text NOT NULL,
  seat_count  integer NOT NULL CHECK (seat_count > 0),
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS reservations (
  id          bigserial PRIMARY KEY,
  event_id    bigint NOT NULL REFERENCES events (id),
  user_id     text NOT NULL,
  status      text NOT NULL CHECK (status IN ('held', 'confirmed', 'cancelled', 'expired')),
  seats       integer[] NOT NULL,
  hold_until  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS reservations_held_until
  ON reservations (hold_until) WHERE status = 'held';
CREATE INDEX IF NOT EXISTS reservations_event ON reservations (event_id);
-- version counts every change of a seat; fence is the highest lock fencing token a write to
-- the seat has carried (0: none yet, or a lock server without tokens).
CREATE TABLE IF NOT EXISTS seats (
  event_id        bigint NOT NULL REFERENCES events (id),
  seat_no         integer NOT NULL,
  status          text NOT NULL DEFAULT 'available'
                    CHECK (status IN ('available', 'reserved', 'confirmed')),
  reservation_id  bigint REFERENCES reservations (id),
  version         bigint NOT NULL DEFAULT 0,
  fence           bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (event_id, seat_no)
);
-- The number of available seats of an event is the sum of its rows here (64 per event, see
-- pg_statements.h): changed in the statements that change seats, read without counting them.
CREATE TABLE IF NOT EXISTS event_counts (
  event_id   bigint NOT NULL REFERENCES events (id),
  slot       smallint NOT NULL,
  available  integer NOT NULL,
  PRIMARY KEY (event_id, slot)
);
-- Aborts a statement (SQLSTATE LT001, read as seat_taken) when the conditional UPDATE of a
-- hold missed a seat, so that the rest of that statement (reservation row, count) is undone.
CREATE OR REPLACE FUNCTION seats_not_held() RETURNS integer LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'a seat of the hold is not available' USING ERRCODE = 'LT001';
END
$fn$;
CREATE INDEX IF NOT EXISTS seats_reservation
  ON seats (reservation_id) WHERE reservation_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS seats_available
  ON seats (event_id, seat_no) WHERE status = 'available';
CREATE TABLE IF NOT EXISTS idempotency_keys (
  key         text PRIMARY KEY,
  request     text NOT NULL,
  status      integer,
  body        text,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
COMMIT;
)sql";

}  // namespace

Outcome<Unit> ApplySchema(PgPool& pool) {
  auto conn = pool.Acquire();
  if (!conn.ok()) return conn.error();
  auto applied = PgExecScript(conn->get(), kSchema);
  if (!applied.ok()) PgExecScript(conn->get(), "ROLLBACK");
  return applied;
}

}  // namespace latch::demo

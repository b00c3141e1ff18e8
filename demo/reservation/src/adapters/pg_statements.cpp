#include "adapters/pg_statements.h"

namespace latch::demo::sql {

// kCountSlots as SQL text.
#define SLOTS "64"

// Columns of a reservation as the store reads them (ReadReservation): `status` is the
// expression of its status column.
#define RESERVATION_COLUMNS(status)                                      \
  "r.id, r.event_id, r.user_id, " status ", array_to_string(r.seats, ','), " \
  "to_char(r.hold_until AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

// The WITH items that expire the held reservations past their time matching `scope` (a
// condition on reservations over the statement's parameters), free their seats and give the
// seats back to their event's count: `expired` (id, event_id), `freed` (event_id, slot),
// `counted` (n per slot). Every item runs to completion whatever the main query reads; the
// main query still sees the rows as they were before (one snapshot), hence `counted`.
// "Due" is compared with statement_timestamp(), which is stable within the statement: an
// index range scan of reservations_held_until then finds the due holds alone. (With the
// volatile clock_timestamp() PostgreSQL cannot bound the scan and reads every held
// reservation, on every read: the cost grew with the number of holds.)
// The seats of a few reservations (`rows`, a WITH item of ids) are looked up as
// `reservation_id = ANY (ARRAY(SELECT id FROM rows))`, an index condition whatever the plan,
// besides the join that gives each seat its reservation: with the join alone, a generic plan
// made while seats_reservation looked empty (the statistics of a fresh event) scans that
// whole index once per statement and rescans `rows` for each entry. Measured in the paced
// demo load (bench/README.md): 1,228 buffers per read after 30 s and growing, PostgreSQL
// at 1.5 cores for 560 req/s, until autovacuum's ANALYZE replanned.
#define SEATS_OF(rows) "seats.reservation_id = ANY (ARRAY(SELECT id FROM " rows "))"
#define EXPIRE_ITEMS(scope)                                                                    \
  "expired AS ("                                                                               \
  "  UPDATE reservations SET status = 'expired', updated_at = clock_timestamp()"               \
  "  WHERE status = 'held' AND hold_until <= statement_timestamp() AND (" scope ")"            \
  "  RETURNING id, event_id),"                                                                 \
  " freed AS ("                                                                                \
  "  UPDATE seats SET status = 'available', reservation_id = NULL, version = version + 1"      \
  "  FROM expired WHERE " SEATS_OF("expired") " AND seats.reservation_id = expired.id"         \
  "  AND seats.status = 'reserved'"                                                            \
  "  RETURNING expired.event_id, expired.id % " SLOTS " AS slot),"                            \
  " counted AS ("                                                                              \
  "  UPDATE event_counts AS c SET available = c.available + f.n"                               \
  "  FROM (SELECT event_id, slot, count(*) AS n FROM freed GROUP BY event_id, slot) AS f"      \
  "  WHERE c.event_id = f.event_id AND c.slot = f.slot RETURNING f.n)"

#define AVAILABLE_NOW                                                              \
  "(SELECT coalesce(sum(available), 0) FROM event_counts WHERE event_id = e.id)" \
  " + (SELECT coalesce(sum(n), 0) FROM counted)"

const PgStatement kCreateEvent{
    "create_event",
    "WITH e AS (INSERT INTO events (name, seat_count) VALUES ($1, $2) RETURNING id, seat_count),"
    " s AS (INSERT INTO seats (event_id, seat_no)"
    "  SELECT e.id, g FROM e, generate_series(1, e.seat_count) AS g),"
    " c AS (INSERT INTO event_counts (event_id, slot, available)"
    "  SELECT e.id, k, CASE WHEN k = 0 THEN e.seat_count ELSE 0 END"
    "  FROM e, generate_series(0, " SLOTS " - 1) AS k)"
    " SELECT id FROM e"};

const PgStatement kGetEvent{
    "get_event",
    "WITH " EXPIRE_ITEMS("event_id = $1")
    " SELECT e.id, e.name, e.seat_count, " AVAILABLE_NOW ", (SELECT count(*) FROM freed)"
    " FROM events e WHERE e.id = $1"};

const PgStatement kSeatPage{
    "seat_page",
    "WITH " EXPIRE_ITEMS("event_id = $1")
    " SELECT e.id, " AVAILABLE_NOW ","
    "  (SELECT coalesce(string_agg(p.seat_no::text, ',' ORDER BY p.seat_no), '') FROM"
    "    (SELECT seat_no FROM seats WHERE event_id = $1 AND status = 'available'"
    "     AND seat_no > $2::integer ORDER BY seat_no OFFSET $4 LIMIT $3) AS p),"
    "  (SELECT count(*) FROM freed)"
    " FROM events e WHERE e.id = $1"};

const PgStatement kSeatMap{
    "seat_map",
    "WITH " EXPIRE_ITEMS("event_id = $1")
    " SELECT s.seat_no, CASE WHEN s.status = 'reserved' AND s.reservation_id IN"
    "  (SELECT id FROM expired) THEN 'available' ELSE s.status END"
    " FROM seats s WHERE s.event_id = $1 AND s.seat_no BETWEEN $2 AND $3 ORDER BY s.seat_no"};

const PgStatement kGetReservation{
    "get_reservation",
    "WITH " EXPIRE_ITEMS("id = $1") " SELECT " RESERVATION_COLUMNS(
        "CASE WHEN EXISTS (SELECT 1 FROM expired) THEN 'expired' ELSE r.status END")
    " FROM reservations r WHERE r.id = $1"};

const PgStatement kExpireAll{
    "expire_all",
    "WITH " EXPIRE_ITEMS("true") " SELECT (SELECT count(*) FROM expired), (SELECT count(*) FROM freed)"};

const PgStatement kExpireSeats{
    "expire_seats",
    "WITH " EXPIRE_ITEMS(
        "id IN (SELECT reservation_id FROM seats WHERE event_id = $1"
        " AND seat_no = ANY($2::integer[]) AND status = 'reserved')")
    " SELECT (SELECT count(*) FROM expired), (SELECT count(*) FROM freed)"};

const PgStatement kExpireReservation{
    "expire_reservation",
    "WITH " EXPIRE_ITEMS("id = $1") " SELECT (SELECT count(*) FROM expired)"};

const PgStatement kLockReservation{
    "lock_reservation",
    "SELECT " RESERVATION_COLUMNS("r.status") " FROM reservations r WHERE r.id = $1 FOR UPDATE"};

// The reservation row and the seats (only those still available, and only with a fencing
// token not older than the newest one a write to the seat carried), in one statement;
// seats_not_held() (pg_schema.cpp) aborts all of it when a seat was refused. The count is
// taken by kTakeSeats, sent with COMMIT.
const PgStatement kHoldSeats{
    "hold_seats",
    "WITH r AS ("
    "  INSERT INTO reservations (event_id, user_id, status, seats, hold_until)"
    "  SELECT $1, $2, 'held', $3::integer[],"
    "    clock_timestamp() + $4::bigint * interval '1 millisecond'"
    "  WHERE EXISTS (SELECT 1 FROM events WHERE id = $1)"
    "  RETURNING *),"
    " held AS ("
    "  UPDATE seats AS s SET status = 'reserved', reservation_id = r.id,"
    "    version = s.version + 1, fence = COALESCE(c.fence, s.fence)"
    "  FROM r, unnest($3::integer[], $5::bigint[]) AS c (seat_no, fence)"
    "  WHERE s.event_id = $1 AND s.seat_no = c.seat_no AND s.status = 'available'"
    "    AND (c.fence IS NULL OR s.fence <= c.fence)"
    "  RETURNING s.seat_no)"
    " SELECT " RESERVATION_COLUMNS("r.status") ","
    "  CASE WHEN (SELECT count(*) FROM held) = cardinality($3::integer[]) THEN 0"
    "  ELSE seats_not_held() END"
    " FROM r"};

const PgStatement kWhyNotHeld{
    "why_not_held",
    "SELECT c.seat_no, s.status, s.fence, c.fence"
    " FROM unnest($2::integer[], $3::bigint[]) AS c (seat_no, fence)"
    " LEFT JOIN seats s ON s.event_id = $1 AND s.seat_no = c.seat_no ORDER BY c.seat_no"};

const PgStatement kConfirm{
    "confirm",
    "WITH r AS (UPDATE reservations SET status = 'confirmed', updated_at = clock_timestamp()"
    "  WHERE id = $1 AND status = 'held' RETURNING id),"
    " s AS (UPDATE seats SET status = 'confirmed', version = version + 1"
    "  FROM r WHERE " SEATS_OF("r") " AND seats.reservation_id = r.id"
    "  AND seats.status = 'reserved' RETURNING 1)"
    " SELECT (SELECT count(*) FROM r)"};

// The fence stays: a write under an older lease must still be refused after a cancel.
const PgStatement kCancel{
    "cancel",
    "WITH r AS (UPDATE reservations SET status = 'cancelled', updated_at = clock_timestamp()"
    "  WHERE id = $1 AND status IN ('held', 'confirmed') RETURNING id, event_id),"
    " s AS (UPDATE seats SET status = 'available', reservation_id = NULL, version = version + 1"
    "  FROM r WHERE " SEATS_OF("r") " AND seats.reservation_id = r.id RETURNING 1),"
    " c AS (UPDATE event_counts AS ec SET available = ec.available + (SELECT count(*) FROM s)"
    "  FROM r WHERE ec.event_id = r.event_id AND ec.slot = $2 RETURNING 1)"
    " SELECT (SELECT count(*) FROM r)"};

const PgStatement kTakeSeats{
    "take_seats",
    "UPDATE event_counts SET available = available - $3 WHERE event_id = $1 AND slot = $2"};

// Blocks on the unique index while another transaction has an uncommitted claim of the same
// key; after it commits, DO NOTHING (and kStoredKey then sees its stored response).
const PgStatement kClaimKey{
    "claim_key",
    "INSERT INTO idempotency_keys (key, request) VALUES ($1, $2)"
    " ON CONFLICT (key) DO NOTHING RETURNING key"};

const PgStatement kStoredKey{"stored_key",
                             "SELECT request, status, body FROM idempotency_keys WHERE key = $1"};

const PgStatement kSaveResponse{
    "save_response", "UPDATE idempotency_keys SET status = $2, body = $3 WHERE key = $1"};

}  // namespace latch::demo::sql

#include "adapters/pg_store.h"

#include <charconv>
#include <utility>

namespace latch::demo {
namespace {

// Columns of a reservation as ReadReservation() expects them.
#define RESERVATION_COLUMNS                                                \
  "r.id, r.event_id, r.user_id, r.status, array_to_string(r.seats, ','), " \
  "to_char(r.hold_until AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

// Expires the held reservations past their time that match `scope` (a condition on
// reservations, using $1.. of the caller) and frees their seats, in one statement.
#define EXPIRE_HOLDS(scope)                                                               \
  "WITH expired AS ("                                                                     \
  "  UPDATE reservations SET status = 'expired', updated_at = clock_timestamp()"          \
  "  WHERE status = 'held' AND hold_until <= clock_timestamp() AND (" scope               \
  ")"                                                                                     \
  "  RETURNING id),"                                                                      \
  " freed AS ("                                                                           \
  "  UPDATE seats SET status = 'available', reservation_id = NULL, version = version + 1" \
  "  FROM expired WHERE seats.reservation_id = expired.id AND seats.status = 'reserved'"  \
  "  RETURNING 1)"                                                                        \
  " SELECT (SELECT count(*) FROM expired), (SELECT count(*) FROM freed)"

constexpr const char* kExpireAll = EXPIRE_HOLDS("true");
constexpr const char* kExpireEvent = EXPIRE_HOLDS("event_id = $1");
constexpr const char* kExpireReservation = EXPIRE_HOLDS("id = $1");
constexpr const char* kExpireSeats = EXPIRE_HOLDS(
    "id IN (SELECT reservation_id FROM seats WHERE event_id = $1"
    " AND seat_no = ANY($2::integer[]) AND status = 'reserved')");

std::string Num(std::int64_t v) { return std::to_string(v); }

// {1,2,3} / {5,NULL}
std::string IntArray(const std::vector<SeatClaim>& seats, bool tokens) {
  std::string out = "{";
  for (std::size_t i = 0; i < seats.size(); ++i) {
    if (i) out += ',';
    if (!tokens) {
      out += Num(seats[i].seat);
    } else {
      out += seats[i].fencing_token ? Num(*seats[i].fencing_token) : "NULL";
    }
  }
  return out + "}";
}

std::vector<SeatNo> ParseSeatList(std::string_view text) {
  std::vector<SeatNo> seats;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    SeatNo v = 0;
    std::from_chars(item.data(), item.data() + item.size(), v);
    seats.push_back(v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return seats;
}

Reservation ReadReservation(const PgResult& r, int row) {
  Reservation out;
  out.id = r.int64(row, 0);
  out.event_id = r.int64(row, 1);
  out.user = std::string(r.text(row, 2));
  out.status = ParseReservationStatus(r.text(row, 3)).value_or(ReservationStatus::kHeld);
  out.seats = ParseSeatList(r.text(row, 4));
  out.hold_expires_at = std::string(r.text(row, 5));
  return out;
}

AppError NoEvent(EventId id) {
  return {ErrorCode::kNotFound, "event " + Num(id) + " does not exist"};
}
AppError NoReservation(ReservationId id) {
  return {ErrorCode::kNotFound, "reservation " + Num(id) + " does not exist"};
}

class PgTx : public ReservationTx {
 public:
  explicit PgTx(PgPool::Conn conn) : conn_(std::move(conn)) {}
  ~PgTx() override {
    if (!done_) PgExecScript(conn_.get(), "ROLLBACK");
  }

  Outcome<std::optional<IdempotencyRecord>> ClaimIdempotencyKey(
      const std::string& key, const std::string& request) override {
    // Blocks on the unique index while another transaction has an uncommitted claim of the
    // same key; after it commits, DO NOTHING and the SELECT below sees its stored response.
    auto claimed = Exec(
        "INSERT INTO idempotency_keys (key, request) VALUES ($1, $2)"
        " ON CONFLICT (key) DO NOTHING RETURNING key",
        {key, request});
    if (!claimed.ok()) return claimed.error();
    if (claimed->rows() == 1) return std::optional<IdempotencyRecord>();
    auto stored = Exec("SELECT request, status, body FROM idempotency_keys WHERE key = $1", {key});
    if (!stored.ok()) return stored.error();
    if (stored->rows() != 1 || stored->null(0, 1)) {
      return AppError{ErrorCode::kConflict, "a request with this Idempotency-Key is in flight"};
    }
    IdempotencyRecord record;
    record.request = std::string(stored->text(0, 0));
    record.response.status = static_cast<int>(stored->int64(0, 1));
    record.response.body = std::string(stored->text(0, 2));
    return std::optional<IdempotencyRecord>(std::move(record));
  }

  Outcome<Unit> SaveResponse(const std::string& key, const StoredResponse& response) override {
    auto saved = Exec("UPDATE idempotency_keys SET status = $2, body = $3 WHERE key = $1",
                      {key, Num(response.status), response.body});
    if (!saved.ok()) return saved.error();
    return Unit{};
  }

  Outcome<Reservation> HoldSeats(EventId event, const std::string& user,
                                 const std::vector<SeatClaim>& seats, Millis hold) override {
    const std::string seat_array = IntArray(seats, false);
    const std::string token_array = IntArray(seats, true);
    auto expired = Exec(kExpireSeats, {Num(event), seat_array});
    if (!expired.ok()) return expired.error();
    // Undone on failure, so that a caller may still commit (e.g. the stored idempotent
    // response) without leaving an empty reservation behind.
    auto savepoint = Exec("SAVEPOINT hold_seats", {});
    if (!savepoint.ok()) return savepoint.error();
    auto held = HoldSeatsInSavepoint(event, user, seats, hold, seat_array, token_array);
    if (!held.ok()) {
      auto undone = Exec("ROLLBACK TO SAVEPOINT hold_seats", {});
      if (!undone.ok()) return undone.error();
    }
    return held;
  }

  Outcome<Reservation> LockReservation(ReservationId id) override {
    auto expired = Exec(kExpireReservation, {Num(id)});
    if (!expired.ok()) return expired.error();
    auto r = Exec("SELECT " RESERVATION_COLUMNS " FROM reservations r WHERE r.id = $1 FOR UPDATE",
                  {Num(id)});
    if (!r.ok()) return r.error();
    if (r->rows() != 1) return NoReservation(id);
    return ReadReservation(*r, 0);
  }

  Outcome<Unit> ConfirmReservation(ReservationId id) override {
    auto r = Exec(
        "UPDATE reservations SET status = 'confirmed', updated_at = clock_timestamp()"
        " WHERE id = $1 AND status = 'held'",
        {Num(id)});
    if (!r.ok()) return r.error();
    if (r->affected() != 1) {
      return AppError{ErrorCode::kInvalidState, "reservation " + Num(id) + " is not held"};
    }
    auto seats = Exec(
        "UPDATE seats SET status = 'confirmed', version = version + 1"
        " WHERE reservation_id = $1 AND status = 'reserved'",
        {Num(id)});
    if (!seats.ok()) return seats.error();
    return Unit{};
  }

  Outcome<Unit> CancelReservation(ReservationId id) override {
    auto r = Exec(
        "UPDATE reservations SET status = 'cancelled', updated_at = clock_timestamp()"
        " WHERE id = $1 AND status IN ('held', 'confirmed')",
        {Num(id)});
    if (!r.ok()) return r.error();
    if (r->affected() != 1) {
      return AppError{ErrorCode::kInvalidState, "reservation " + Num(id) + " is not active"};
    }
    // The fence stays: a write under an older lease must still be refused after a cancel.
    auto seats = Exec(
        "UPDATE seats SET status = 'available', reservation_id = NULL, version = version + 1"
        " WHERE reservation_id = $1",
        {Num(id)});
    if (!seats.ok()) return seats.error();
    return Unit{};
  }

  Outcome<Unit> Commit() override {
    auto r = PgExecScript(conn_.get(), "COMMIT");
    done_ = true;
    return r;
  }

 private:
  Outcome<PgResult> Exec(const char* sql, const PgParams& params) {
    return PgExec(conn_.get(), sql, params);
  }

  Outcome<Reservation> HoldSeatsInSavepoint(EventId event, const std::string& user,
                                            const std::vector<SeatClaim>& seats, Millis hold,
                                            const std::string& seat_array,
                                            const std::string& token_array) {
    auto inserted = Exec(
        "INSERT INTO reservations AS r (event_id, user_id, status, seats, hold_until)"
        " SELECT $1, $2, 'held', $3::integer[],"
        "   clock_timestamp() + $4::bigint * interval '1 millisecond'"
        " WHERE EXISTS (SELECT 1 FROM events WHERE id = $1)"
        " RETURNING " RESERVATION_COLUMNS,
        {Num(event), user, seat_array, Num(hold.count())});
    if (!inserted.ok()) return inserted.error();
    if (inserted->rows() != 1) return NoEvent(event);
    Reservation reservation = ReadReservation(*inserted, 0);
    // Defence 2, the final check: only seats still available, and only with a fencing token
    // not older than the newest one a write to the seat has carried.
    auto updated = Exec(
        "UPDATE seats AS s SET status = 'reserved', reservation_id = $2,"
        "   version = s.version + 1, fence = COALESCE(c.fence, s.fence)"
        " FROM unnest($3::integer[], $4::bigint[]) AS c (seat_no, fence)"
        " WHERE s.event_id = $1 AND s.seat_no = c.seat_no AND s.status = 'available'"
        "   AND (c.fence IS NULL OR s.fence <= c.fence)",
        {Num(event), Num(reservation.id), seat_array, token_array});
    if (!updated.ok()) return updated.error();
    if (updated->affected() == static_cast<std::int64_t>(seats.size())) return reservation;
    return WhyNotHeld(event, seat_array, token_array);
  }

  // After the conditional UPDATE missed some seats: which rule refused which seat.
  Outcome<Reservation> WhyNotHeld(EventId event, const std::string& seat_array,
                                  const std::string& token_array) {
    auto r = Exec(
        "SELECT c.seat_no, s.status, s.fence, c.fence"
        " FROM unnest($2::integer[], $3::bigint[]) AS c (seat_no, fence)"
        " LEFT JOIN seats s ON s.event_id = $1 AND s.seat_no = c.seat_no ORDER BY c.seat_no",
        {Num(event), seat_array, token_array});
    if (!r.ok()) return r.error();
    for (int i = 0; i < r->rows(); ++i) {
      const std::string seat(r->text(i, 0));
      if (r->null(i, 1)) {
        return AppError{ErrorCode::kNotFound,
                        "seat " + seat + " does not exist in event " + Num(event)};
      }
      if (r->text(i, 1) != "available") {
        return AppError{ErrorCode::kSeatTaken,
                        "seat " + seat + " is " + std::string(r->text(i, 1))};
      }
      if (!r->null(i, 3) && r->int64(i, 2) > r->int64(i, 3)) {
        return AppError{ErrorCode::kStaleFence,
                        "seat " + seat + " was written under a newer lock (fencing token " +
                            std::string(r->text(i, 3)) + " < " + std::string(r->text(i, 2)) + ")"};
      }
    }
    // Changed between the UPDATE and this look (another transaction committed meanwhile).
    return AppError{ErrorCode::kSeatTaken, "a seat was taken concurrently"};
  }

  PgPool::Conn conn_;
  bool done_ = false;
};

}  // namespace

Outcome<PgPool::Conn> PgStore::BeginOn() {
  for (int attempt = 0;; ++attempt) {
    auto conn = pool_.Acquire();
    if (!conn.ok()) return conn.error();
    auto begun = PgExecScript(conn->get(), "BEGIN");
    if (begun.ok()) return std::move(conn.value());
    if (begun.error().code != ErrorCode::kUnavailable || attempt == 1) return begun.error();
    // The connection died while idle; it is closed when `conn` goes back to the pool.
  }
}

Outcome<std::unique_ptr<ReservationTx>> PgStore::Begin() {
  auto conn = BeginOn();
  if (!conn.ok()) return conn.error();
  return std::unique_ptr<ReservationTx>(std::make_unique<PgTx>(std::move(conn.value())));
}

Outcome<Event> PgStore::CreateEvent(const std::string& name, SeatNo seat_count) {
  auto conn = BeginOn();
  if (!conn.ok()) return conn.error();
  PGconn* c = conn->get();
  auto event = PgExec(c, "INSERT INTO events (name, seat_count) VALUES ($1, $2) RETURNING id",
                      {name, Num(seat_count)});
  if (!event.ok()) return event.error();
  const EventId id = event->int64(0, 0);
  // One set-based INSERT: the server generates the rows, nothing crosses the wire per seat.
  auto seats = PgExec(c,
                      "INSERT INTO seats (event_id, seat_no)"
                      " SELECT $1, g FROM generate_series(1, $2::integer) AS g",
                      {Num(id), Num(seat_count)});
  if (!seats.ok()) return seats.error();
  auto committed = PgExecScript(c, "COMMIT");
  if (!committed.ok()) return committed.error();
  return Event{id, name, seat_count, seat_count};
}

Outcome<Event> PgStore::GetEvent(EventId id) {
  auto conn = BeginOn();
  if (!conn.ok()) return conn.error();
  PGconn* c = conn->get();
  auto expired = PgExec(c, kExpireEvent, {Num(id)});
  if (!expired.ok()) return expired.error();
  auto r = PgExec(c,
                  "SELECT e.id, e.name, e.seat_count, (SELECT count(*) FROM seats s"
                  "   WHERE s.event_id = e.id AND s.status = 'available')"
                  " FROM events e WHERE e.id = $1",
                  {Num(id)});
  if (!r.ok()) return r.error();
  auto committed = PgExecScript(c, "COMMIT");
  if (!committed.ok()) return committed.error();
  if (r->rows() != 1) return NoEvent(id);
  return Event{r->int64(0, 0), std::string(r->text(0, 1)), static_cast<SeatNo>(r->int64(0, 2)),
               r->int64(0, 3)};
}

Outcome<SeatPage> PgStore::AvailableSeats(EventId id, std::int64_t offset, std::int64_t limit) {
  auto event = GetEvent(id);  // expires due holds and counts
  if (!event.ok()) return event.error();
  auto conn = pool_.Acquire();
  if (!conn.ok()) return conn.error();
  auto r = PgExec(conn->get(),
                  "SELECT seat_no FROM seats WHERE event_id = $1 AND status = 'available'"
                  " ORDER BY seat_no OFFSET $2 LIMIT $3",
                  {Num(id), Num(offset), Num(limit)});
  if (!r.ok()) return r.error();
  SeatPage page;
  page.event_id = id;
  page.available = event->available;
  page.seats.reserve(r->rows());
  for (int i = 0; i < r->rows(); ++i) page.seats.push_back(static_cast<SeatNo>(r->int64(i, 0)));
  return page;
}

Outcome<Reservation> PgStore::GetReservation(ReservationId id) {
  auto conn = BeginOn();
  if (!conn.ok()) return conn.error();
  PGconn* c = conn->get();
  auto expired = PgExec(c, kExpireReservation, {Num(id)});
  if (!expired.ok()) return expired.error();
  auto r =
      PgExec(c, "SELECT " RESERVATION_COLUMNS " FROM reservations r WHERE r.id = $1", {Num(id)});
  if (!r.ok()) return r.error();
  auto committed = PgExecScript(c, "COMMIT");
  if (!committed.ok()) return committed.error();
  if (r->rows() != 1) return NoReservation(id);
  return ReadReservation(*r, 0);
}

Outcome<std::int64_t> PgStore::ExpireDueHolds() {
  auto conn = BeginOn();
  if (!conn.ok()) return conn.error();
  auto r = PgExec(conn->get(), kExpireAll, {});
  if (!r.ok()) return r.error();
  auto committed = PgExecScript(conn->get(), "COMMIT");
  if (!committed.ok()) return committed.error();
  return r->int64(0, 0);
}

Outcome<Unit> PgStore::Ping() {
  auto conn = BeginOn();
  if (!conn.ok()) return conn.error();
  return PgExecScript(conn->get(), "COMMIT");
}

}  // namespace latch::demo

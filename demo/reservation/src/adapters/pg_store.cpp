#include "adapters/pg_store.h"

#include <charconv>
#include <random>
#include <utility>

#include "adapters/pg_statements.h"

namespace latch::demo {
namespace {

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

// The columns of RESERVATION_COLUMNS (pg_statements.cpp) of one row.
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

// The event_counts row a change goes to: any one will do (the sum is what counts), and
// spreading them keeps concurrent bookings of an event off each other's row.
std::string RandomSlot() {
  thread_local std::minstd_rand rng{std::random_device{}()};
  return std::to_string(std::uniform_int_distribution<int>(0, sql::kCountSlots - 1)(rng));
}

PgCall Call(const PgStatement& statement, PgParams params) {
  return PgCall{&statement, std::move(params), nullptr};
}
PgCall Script(const char* sql) { return PgCall{nullptr, {}, sql}; }

// Runs `calls` as one pipeline on a pooled connection outside any transaction. A pooled
// connection that the server closed while it was idle fails at once: it is dropped and the
// pipeline sent again, once, on a fresh one (every caller's statements are safe to repeat).
Outcome<std::vector<PgResult>> RunPooled(PgPool& pool, const std::vector<PgCall>& calls) {
  for (int attempt = 0;; ++attempt) {
    auto conn = pool.Acquire();
    if (!conn.ok()) return conn.error();
    auto r = PgPipeline(conn->session(), calls);
    if (r.ok() || r.error().code != ErrorCode::kUnavailable || attempt == 1) return r;
  }
}

class PgTx : public ReservationTx {
 public:
  PgTx(PgPool& pool, PgPool::Conn conn) : pool_(pool), conn_(std::move(conn)) {}
  ~PgTx() override {
    if (begun_ && !done_) PgExecScript(conn_->get(), "ROLLBACK");
  }

  Outcome<std::optional<IdempotencyRecord>> ClaimIdempotencyKey(
      const std::string& key, const std::string& request) override {
    auto claimed = Run({Call(sql::kClaimKey, {key, request})});
    if (!claimed.ok()) return claimed.error();
    if (claimed->back().rows() == 1) return std::optional<IdempotencyRecord>();
    auto stored = Run({Call(sql::kStoredKey, {key})});
    if (!stored.ok()) return stored.error();
    const PgResult& r = stored->back();
    if (r.rows() != 1 || r.null(0, 1)) {
      return AppError{ErrorCode::kConflict, "a request with this Idempotency-Key is in flight"};
    }
    IdempotencyRecord record;
    record.request = std::string(r.text(0, 0));
    record.response.status = static_cast<int>(r.int64(0, 1));
    record.response.body = std::string(r.text(0, 2));
    return std::optional<IdempotencyRecord>(std::move(record));
  }

  Outcome<Unit> CommitWithResponse(const std::string& key,
                                   const StoredResponse& response) override {
    std::vector<PgCall> calls{Call(sql::kSaveResponse, {key, Num(response.status), response.body})};
    if (pending_count_) calls.push_back(std::move(*pending_count_));
    calls.push_back(Script("COMMIT"));
    auto saved = Run(std::move(calls));
    if (!saved.ok()) return saved.error();
    done_ = true;
    return Unit{};
  }

  Outcome<Reservation> HoldSeats(EventId event, const std::string& user,
                                 const std::vector<SeatClaim>& seats, Millis hold,
                                 bool commit) override {
    const std::string seat_array = IntArray(seats, false);
    const std::string token_array = IntArray(seats, true);
    // Expired holds on these seats first, then the hold, in a savepoint: a refused hold is
    // undone alone, and the caller may still commit (e.g. the stored idempotent response).
    std::vector<PgCall> calls{Call(sql::kExpireSeats, {Num(event), seat_array}),
                              Script("SAVEPOINT hold_seats"),
                              Call(sql::kHoldSeats, {Num(event), user, seat_array,
                                                     Num(hold.count()), token_array})};
    // The count's share, in the round trip that commits (its row is locked until then). Not
    // run when the hold fails (the pipeline stops there); no row when the event is unknown.
    PgCall take = Call(sql::kTakeSeats, {Num(event), RandomSlot(), Num(seats.size())});
    if (commit) {
      calls.push_back(std::move(take));
      calls.push_back(Script("COMMIT"));
    }
    auto held = Run(std::move(calls));
    if (held.ok()) {
      const PgResult& r = held->at(2);
      if (commit) done_ = true;
      if (r.rows() != 1) return NoEvent(event);  // (committed nothing but the expiry)
      if (!commit) pending_count_ = std::move(take);
      return ReadReservation(r, 0);
    }
    if (held.error().code != ErrorCode::kSeatTaken) return held.error();
    // Which rule refused which seat, looked at with the hold undone.
    auto why = Run({Script("ROLLBACK TO SAVEPOINT hold_seats"),
                    Call(sql::kWhyNotHeld, {Num(event), seat_array, token_array})});
    if (!why.ok()) return why.error();
    return WhyNotHeld(event, why->back());
  }

  Outcome<Reservation> LockReservation(ReservationId id) override {
    auto r = Run({Call(sql::kExpireReservation, {Num(id)}), Call(sql::kLockReservation, {Num(id)})});
    if (!r.ok()) return r.error();
    if (r->back().rows() != 1) return NoReservation(id);
    return ReadReservation(r->back(), 0);
  }

  Outcome<Unit> ConfirmAndCommit(ReservationId id) override {
    return ChangeAndCommit(sql::kConfirm, {Num(id)}, id, "is not held");
  }
  Outcome<Unit> CancelAndCommit(ReservationId id) override {
    return ChangeAndCommit(sql::kCancel, {Num(id), RandomSlot()}, id, "is not active");
  }

  Outcome<Unit> Commit() override {
    if (done_ || !begun_) {
      done_ = true;
      return Unit{};
    }
    std::vector<PgCall> calls;
    if (pending_count_) calls.push_back(std::move(*pending_count_));
    calls.push_back(Script("COMMIT"));
    auto r = Run(std::move(calls));
    done_ = true;
    if (!r.ok()) return r.error();
    return Unit{};
  }

 private:
  // Runs `calls` in this transaction; the first batch starts it (BEGIN goes in the same round
  // trip). A first batch that finds its pooled connection closed (the server restarted while
  // it sat idle: nothing of the batch ran) is sent again on a fresh connection, once. Should
  // the server instead have died after running a batch that ends in COMMIT, the repeated
  // hold finds its seats taken (by itself) and answers seat_taken: never a second booking.
  Outcome<std::vector<PgResult>> Run(std::vector<PgCall> calls) {
    const bool first = !begun_;
    if (first) calls.insert(calls.begin(), Script("BEGIN"));
    auto r = PgPipeline(conn_->session(), calls);
    if (first && !r.ok() && r.error().code == ErrorCode::kUnavailable) {
      auto fresh = pool_.Acquire();
      if (!fresh.ok()) return fresh.error();
      conn_.emplace(std::move(fresh.value()));  // the broken one is closed by the pool
      r = PgPipeline(conn_->session(), calls);
    }
    begun_ = true;
    if (!r.ok()) return r.error();
    if (first) r->erase(r->begin());
    return r;
  }

  Outcome<Unit> ChangeAndCommit(const PgStatement& statement, PgParams params, ReservationId id,
                                const char* refusal) {
    auto r = Run({Call(statement, std::move(params)), Script("COMMIT")});
    if (!r.ok()) return r.error();
    done_ = true;
    if (r->front().int64(0, 0) != 1) {
      return AppError{ErrorCode::kInvalidState, "reservation " + Num(id) + " " + refusal};
    }
    return Unit{};
  }

  // After the conditional UPDATE missed a seat: which rule refused which seat (the rows of
  // kWhyNotHeld).
  static Outcome<Reservation> WhyNotHeld(EventId event, const PgResult& r) {
    for (int i = 0; i < r.rows(); ++i) {
      const std::string seat(r.text(i, 0));
      if (r.null(i, 1)) {
        return AppError{ErrorCode::kNotFound,
                        "seat " + seat + " does not exist in event " + Num(event)};
      }
      if (r.text(i, 1) != "available") {
        return AppError{ErrorCode::kSeatTaken, "seat " + seat + " is " + std::string(r.text(i, 1))};
      }
      if (!r.null(i, 3) && r.int64(i, 2) > r.int64(i, 3)) {
        return AppError{ErrorCode::kStaleFence,
                        "seat " + seat + " was written under a newer lock (fencing token " +
                            std::string(r.text(i, 3)) + " < " + std::string(r.text(i, 2)) + ")"};
      }
    }
    // Changed between the UPDATE and this look (another transaction committed meanwhile).
    return AppError{ErrorCode::kSeatTaken, "a seat was taken concurrently"};
  }

  PgPool& pool_;
  std::optional<PgPool::Conn> conn_;
  std::optional<PgCall> pending_count_;  // a hold's kTakeSeats, sent with COMMIT
  bool begun_ = false;
  bool done_ = false;
};

}  // namespace

Outcome<std::unique_ptr<ReservationTx>> PgStore::Begin() {
  // BEGIN itself travels with the transaction's first statements (PgTx::Run).
  auto conn = pool_.Acquire();
  if (!conn.ok()) return conn.error();
  return std::unique_ptr<ReservationTx>(std::make_unique<PgTx>(pool_, std::move(conn.value())));
}

Outcome<Event> PgStore::CreateEvent(const std::string& name, SeatNo seat_count) {
  auto r = RunPooled(pool_, {Call(sql::kCreateEvent, {name, Num(seat_count)})});
  if (!r.ok()) return r.error();
  // VACUUM ANALYZE right after (it cannot run in a pipeline's transaction). Statistics: with
  // those of the table before this event (2 rows for an event id it has never seen),
  // PostgreSQL plans a hold as a scan of all the event's available seats instead of one index
  // lookup per seat, and autovacuum analyzes only a minute later (measured on 100,000 seats:
  // 80-400 ms per hold, most of PostgreSQL's CPU under load). The visibility map: seat pages
  // then read the index alone. A failure here costs speed, not correctness: not reported.
  if (auto conn = pool_.Acquire(); conn.ok()) {
    PgExecScript(conn->get(), "VACUUM (ANALYZE) seats, event_counts");
  }
  return Event{r->front().int64(0, 0), name, seat_count, seat_count};
}

Outcome<Event> PgStore::GetEvent(EventId id) {
  auto r = RunPooled(pool_, {Call(sql::kGetEvent, {Num(id)})});
  if (!r.ok()) return r.error();
  const PgResult& row = r->front();
  if (row.rows() != 1) return NoEvent(id);
  return Event{row.int64(0, 0), std::string(row.text(0, 1)),
               static_cast<SeatNo>(row.int64(0, 2)), row.int64(0, 3)};
}

Outcome<SeatPage> PgStore::AvailableSeats(EventId id, SeatNo after, std::int64_t offset,
                                          std::int64_t limit) {
  const PgParams params{Num(id), Num(after), Num(limit), Num(offset)};
  auto r = RunPooled(pool_, {Call(sql::kSeatPage, params)});
  if (!r.ok()) return r.error();
  // Seats freed by this very statement are not in its page (one snapshot): read again, once.
  if (r->front().rows() == 1 && r->front().int64(0, 3) > 0) {
    r = RunPooled(pool_, {Call(sql::kSeatPage, params)});
    if (!r.ok()) return r.error();
  }
  const PgResult& row = r->front();
  if (row.rows() != 1) return NoEvent(id);
  SeatPage page;
  page.event_id = id;
  page.available = row.int64(0, 1);
  page.seats = ParseSeatList(row.text(0, 2));
  return page;
}

Outcome<SeatMap> PgStore::Seats(EventId id, SeatNo first, SeatNo last) {
  auto r = RunPooled(pool_, {Call(sql::kSeatMap, {Num(id), Num(first), Num(last)})});
  if (!r.ok()) return r.error();
  const PgResult& rows = r->front();
  SeatMap map;
  map.event_id = id;
  map.first = rows.rows() > 0 ? static_cast<SeatNo>(rows.int64(0, 0)) : first;
  map.statuses.reserve(rows.rows());
  for (int i = 0; i < rows.rows(); ++i) {
    map.statuses.push_back(ParseSeatStatus(rows.text(i, 1)).value_or(SeatStatus::kReserved));
  }
  return map;
}

Outcome<Reservation> PgStore::GetReservation(ReservationId id) {
  auto r = RunPooled(pool_, {Call(sql::kGetReservation, {Num(id)})});
  if (!r.ok()) return r.error();
  if (r->front().rows() != 1) return NoReservation(id);
  return ReadReservation(r->front(), 0);
}

Outcome<std::int64_t> PgStore::ExpireDueHolds() {
  auto r = RunPooled(pool_, {Call(sql::kExpireAll, {})});
  if (!r.ok()) return r.error();
  return r->front().int64(0, 0);
}

Outcome<Unit> PgStore::Ping() {
  auto r = RunPooled(pool_, {Script("SELECT 1")});
  if (!r.ok()) return r.error();
  return Unit{};
}

}  // namespace latch::demo

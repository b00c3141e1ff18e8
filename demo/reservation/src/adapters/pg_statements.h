#pragma once
// The SQL of the PostgreSQL store, as prepared statements (pg_statements.cpp). Each is one
// round trip; the comments say what it returns.
//
// Availability is kept in event_counts: kCountSlots rows per event whose sum is the number of
// available seats, changed in the same transaction as the seats (so it is exact at every
// commit). A change goes to any one row (a random slot, or id % kCountSlots for expiry), so
// concurrent bookings of one event update different rows instead of queueing on one; a
// booking changes its row in the round trip that commits, so the row lock is short.
#include "adapters/pg_pool.h"

namespace latch::demo::sql {

inline constexpr int kCountSlots = 64;

// $1 name, $2 seat count -> id. The event, its seats and its count slots, in one statement.
extern const PgStatement kCreateEvent;
// $1 event -> id, name, seat_count, available, seats freed now. Expires the event's due holds
// first (their seats count as available in the same reply).
extern const PgStatement kGetEvent;
// $1 event, $2 after seat, $3 limit, $4 offset -> id, available, seat list "1,2,5", seats
// freed now. The page comes from the index of available seats (seat_no > $2). When holds
// were expired by this very statement the page may miss their seats: run it again.
extern const PgStatement kSeatPage;
// $1 event, $2 first seat, $3 last seat -> seat_no, status (one row per seat of the range).
extern const PgStatement kSeatMap;
// $1 reservation -> the reservation's columns (see pg_store.cpp); expires it first if due.
extern const PgStatement kGetReservation;
// () -> reservations expired, seats freed.
extern const PgStatement kExpireAll;
// $1 event, $2 seats '{1,2}' -> (counts). Expires the holds on these seats that are due.
extern const PgStatement kExpireSeats;
// $1 reservation. Expires it if due (before it is locked for a state change).
extern const PgStatement kExpireReservation;
// $1 reservation -> its columns, locked FOR UPDATE.
extern const PgStatement kLockReservation;
// $1 event, $2 user, $3 seats '{1,2}', $4 hold ms, $5 fencing tokens '{7,NULL}' -> the new
// reservation's columns; no row when the event does not exist. Defence 2: every seat must be
// available and its fence not newer than the token, else the statement fails with SQLSTATE
// LT001 (mapped to kSeatTaken) and nothing of it stays.
extern const PgStatement kHoldSeats;
// $1 event, $2 seats, $3 tokens -> seat_no, status, fence, token: why a hold failed.
extern const PgStatement kWhyNotHeld;
// $1 reservation -> reservations changed (1, or 0 when it was not held).
extern const PgStatement kConfirm;
// $1 reservation, $2 count slot -> reservations changed (1, or 0 when it was not active).
extern const PgStatement kCancel;
// $1 event, $2 count slot, $3 seats held: the count's share of a hold (sent with COMMIT).
extern const PgStatement kTakeSeats;
// $1 key, $2 request -> the key when claimed now.
extern const PgStatement kClaimKey;
// $1 key -> request, status, body.
extern const PgStatement kStoredKey;
// $1 key, $2 status, $3 body.
extern const PgStatement kSaveResponse;

}  // namespace latch::demo::sql

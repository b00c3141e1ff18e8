// The statements that touch the seats of a few reservations stay cheap whatever plan
// PostgreSQL caches for them. A prepared statement gets a generic plan after five runs, made
// from the statistics of that moment: on a fresh event those say that no seat has a
// reservation, and a join of the seats with the statement's few reservations could then scan
// all of seats_reservation, once per statement, for as long as the plan is cached. In the paced
// demo load that was 1,228 buffers per read after 30 s and PostgreSQL at 1.5 cores for 560
// req/s (bench/README.md). Here the statistics are made stale on purpose (2,000 seats booked
// behind ANALYZE's back) and each statement's generic plan is run under EXPLAIN ANALYZE: the
// buffers it touches must not grow with the booked seats.
#include <libpq-fe.h>

#include <boost/json/parse.hpp>
#include <string>
#include <vector>

#include "adapters/pg_statements.h"
#include "demo_fixture.h"

namespace latch::demo::test {
namespace {

constexpr int kSeats = 3000;
constexpr int kBooked = 2000;
// A lookup by index touches a few pages per reservation; a scan of the booked seats'
// index entries and heap rows touches at least kBooked / 300 index pages plus their rows
// (measured: 1,920-1,952 buffers with the join alone, get_event and seat_page).
constexpr std::int64_t kMaxBuffers = 200;

class PlansTest : public DemoTest {
 protected:
  void SetUp() override {
    DemoTest::SetUp();
    conn_ = PQconnectdb((conninfo() + " connect_timeout=5").c_str());
    ASSERT_EQ(PQstatus(conn_), CONNECTION_OK) << PQerrorMessage(conn_);
  }
  void TearDown() override {
    if (conn_ != nullptr) PQfinish(conn_);
    DemoTest::TearDown();
  }
  // Runs `sql` (one or more commands); the last result's first field, "" on error.
  std::string Run(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    std::string out;
    auto status = PQresultStatus(r);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      ADD_FAILURE() << sql << ": " << PQresultErrorMessage(r);
    } else if (status == PGRES_TUPLES_OK && PQntuples(r) > 0) {
      out = PQgetvalue(r, 0, 0);
    }
    PQclear(r);
    return out;
  }
  // The shared buffers the generic plan of `statement` touches when run with `args`
  // (inside a transaction rolled back after, so writes leave nothing); -1 on error.
  std::int64_t GenericPlanBuffers(const PgStatement& statement, const std::string& args) {
    Run("BEGIN");
    Run("SET LOCAL plan_cache_mode = force_generic_plan");
    Run(std::string("PREPARE probe AS ") + statement.sql);
    std::string json = Run("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE probe(" + args + ")");
    Run("ROLLBACK");
    Run("DEALLOCATE ALL");
    if (json.empty()) return -1;
    // The top node counts the buffers of every node below it, CTEs and subplans included.
    boost::json::value doc = boost::json::parse(json);
    const boost::json::object* plan = nullptr;
    if (doc.is_array() && !doc.as_array().empty() && doc.as_array()[0].is_object()) {
      if (const auto* p = doc.as_array()[0].as_object().if_contains("Plan")) {
        plan = p->if_object();
      }
    }
    if (plan == nullptr) {
      ADD_FAILURE() << "no plan in " << json;
      return -1;
    }
    std::int64_t blocks = 0;
    for (const char* key : {"Shared Hit Blocks", "Shared Read Blocks"}) {
      if (const auto* v = plan->if_contains(key)) blocks += v->to_number<std::int64_t>();
    }
    return blocks;
  }

  PGconn* conn_ = nullptr;
};

TEST_P(PlansTest, SeatLookupsOfAFewReservationsStayBoundedOnStaleStatistics) {
  int port = StartService();
  ASSERT_NE(port, 0);
  // Creating the event analyzes seats (see PgStore::CreateEvent): no seat is booked then.
  std::int64_t event = CreateEvent(port, kSeats);
  ASSERT_GT(event, 0);
  const std::string ev = std::to_string(event);
  Run("ALTER TABLE seats SET (autovacuum_enabled = false);"
      "ALTER TABLE reservations SET (autovacuum_enabled = false)");
  Run("INSERT INTO reservations (event_id, user_id, status, seats, hold_until)"
      " SELECT " +
      ev +
      ", 'u' || g, 'confirmed', ARRAY[g], now()"
      " FROM generate_series(1, " +
      std::to_string(kBooked) + ") AS g");
  // Reservations on seats in random order, as bookings come: the seats of consecutive
  // reservation ids lie on different pages, so a scan of seats_reservation touches a page
  // per booked seat (in seat order it would reuse the pinned page and hide the scan).
  Run("UPDATE seats s SET status = 'confirmed', reservation_id = r.id FROM"
      " (SELECT id, row_number() OVER (ORDER BY random()) AS n FROM reservations"
      "  WHERE event_id = " +
      ev + ") AS r WHERE s.event_id = " + ev + " AND s.seat_no = r.n");
  ASSERT_EQ(QueryInt("SELECT count(*) FROM seats WHERE reservation_id IS NOT NULL"), kBooked);

  struct Case {
    const PgStatement& statement;
    std::string args;
  };
  // Reservation 0 does not exist: confirm and cancel find nothing to change, and a plan
  // that looks for its seats by scanning is as costly as with a real one.
  const std::vector<Case> cases = {
      {sql::kGetEvent, ev},        {sql::kSeatPage, ev + ", 0, 100, 0"},
      {sql::kGetReservation, "1"}, {sql::kConfirm, "0"},
      {sql::kCancel, "0, 0"},
  };
  for (const Case& c : cases) {
    std::int64_t buffers = GenericPlanBuffers(c.statement, c.args);
    EXPECT_GE(buffers, 0) << c.statement.name;
    EXPECT_LT(buffers, kMaxBuffers) << c.statement.name << " touched " << buffers
                                    << " buffers with " << kBooked << " seats booked";
  }
}

// PostgreSQL alone decides here; one lock server is enough.
INSTANTIATE_TEST_SUITE_P(Backends, PlansTest, ::testing::Values(LockBackend::kLatchd), BackendName);

}  // namespace
}  // namespace latch::demo::test

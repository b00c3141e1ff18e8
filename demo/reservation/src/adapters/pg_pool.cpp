#include "adapters/pg_pool.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

#include "adapters/round_trips.h"

namespace latch::demo {
namespace {

bool StartsWith(const char* s, const char* prefix) {
  return s != nullptr && std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

std::string Trimmed(const char* message) {
  std::string text = message == nullptr ? "" : message;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

AppError ErrorOf(PGconn* conn, const PGresult* result) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = Trimmed(result ? PQresultErrorMessage(result) : PQerrorMessage(conn));
  if (message.empty()) message = Trimmed(PQerrorMessage(conn));
  // Class 08: connection exceptions; 57P0x: the server is shutting down or terminated us.
  if (PQstatus(conn) != CONNECTION_OK || state == nullptr || StartsWith(state, "08") ||
      StartsWith(state, "57P")) {
    return {ErrorCode::kUnavailable, "PostgreSQL unavailable: " + message};
  }
  if (std::strcmp(state, "LT001") == 0) {  // seats_not_held(), pg_schema.cpp
    return {ErrorCode::kSeatTaken, "a seat is not available"};
  }
  if (std::strcmp(state, "40001") == 0 || std::strcmp(state, "40P01") == 0) {
    return {ErrorCode::kConflict, "transaction conflict, retry: " + message};
  }
  return {ErrorCode::kInternal, "PostgreSQL error " + std::string(state) + ": " + message};
}

}  // namespace

std::int64_t PgResult::int64(int row, int col) const {
  if (null(row, col)) return 0;
  std::string_view t = text(row, col);
  std::int64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

std::int64_t PgResult::affected() const {
  const char* n = PQcmdTuples(r_.get());
  std::int64_t v = 0;
  if (n != nullptr) std::from_chars(n, n + std::strlen(n), v);
  return v;
}

namespace {

bool Succeeded(const PGresult* r) {
  const ExecStatusType status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

std::vector<const char*> Values(const PgParams& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  return values;
}

// One message of a pipeline whose result is read back: a statement's Parse (prepared once
// per connection, in the pipeline itself: a Parse sent alone would be refused inside a
// failed transaction) or a call.
struct Slot {
  const PgStatement* prepare = nullptr;  // set: the Parse of this statement
  std::size_t call = 0;                  // else: the index of the call
};

bool Send(PgSession& session, const PgCall& call) {
  if (call.statement == nullptr) {
    return PQsendQueryParams(session.conn, call.sql, 0, nullptr, nullptr, nullptr, nullptr, 0) ==
           1;
  }
  auto values = Values(call.params);
  return PQsendQueryPrepared(session.conn, call.statement->name, static_cast<int>(values.size()),
                             values.data(), nullptr, nullptr, 0) == 1;
}

// Sends every call (each statement's Parse first where the connection lacks it); false when
// libpq refuses to queue one (the connection is broken).
bool SendAll(PgSession& session, const std::vector<PgCall>& calls, std::vector<Slot>* slots) {
  std::unordered_set<const PgStatement*> parsing;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const PgStatement* st = calls[i].statement;
    if (st != nullptr && session.prepared.count(st) == 0 && parsing.insert(st).second) {
      if (PQsendPrepare(session.conn, st->name, st->sql, 0, nullptr) != 1) return false;
      slots->push_back({st, 0});
    }
    if (!Send(session, calls[i])) return false;
    slots->push_back({nullptr, i});
  }
  return true;
}

}  // namespace

Outcome<PgResult> PgExec(PGconn* conn, const char* sql, const PgParams& params) {
  auto values = Values(params);
  ++ThisThreadRoundTrips().postgres;
  PgResult result(PQexecParams(conn, sql, static_cast<int>(values.size()), nullptr, values.data(),
                               nullptr, nullptr, 0));
  if (Succeeded(result.raw())) return result;
  return ErrorOf(conn, result.raw());
}

Outcome<PgResult> PgExec(PgSession& session, const PgStatement& statement,
                         const PgParams& params) {
  auto r = PgPipeline(session, {PgCall{&statement, params, nullptr}});
  if (!r.ok()) return r.error();
  return std::move(r->front());
}

Outcome<std::vector<PgResult>> PgPipeline(PgSession& session, const std::vector<PgCall>& calls) {
  PGconn* conn = session.conn;
  if (PQenterPipelineMode(conn) != 1) return ErrorOf(conn, nullptr);
  ++ThisThreadRoundTrips().postgres;
  std::vector<Slot> slots;
  const bool sent = SendAll(session, calls, &slots);
  // Every sent message has its result, then the Sync its own; a connection that fails in
  // between is left in pipeline mode and closed by the pool (see PgPool::Return).
  const bool synced = PQpipelineSync(conn) == 1;
  std::vector<PgResult> results;
  std::optional<AppError> error;
  if (!sent || !synced) error = ErrorOf(conn, nullptr);
  for (std::size_t i = 0; i < slots.size() && synced; ++i) {
    PgResult r(PQgetResult(conn));
    if (r.raw() == nullptr) {
      if (!error) error = ErrorOf(conn, nullptr);
      break;
    }
    const ExecStatusType status = PQresultStatus(r.raw());
    const bool ok = Succeeded(r.raw());
    if (!error && status != PGRES_PIPELINE_ABORTED && !ok) error = ErrorOf(conn, r.raw());
    if (PQgetResult(conn) != nullptr) {  // one result per message, then the end marker
      if (!error) error = AppError{ErrorCode::kInternal, "PostgreSQL: extra result in pipeline"};
      break;
    }
    if (slots[i].prepare != nullptr) {
      if (ok) session.prepared.insert(slots[i].prepare);
    } else {
      results.push_back(std::move(r));
    }
  }
  // Bounded: the Sync's result comes after the others'.
  for (int i = 0; i < 4 && synced; ++i) {
    PgResult r(PQgetResult(conn));
    if (r.raw() != nullptr && PQresultStatus(r.raw()) == PGRES_PIPELINE_SYNC) break;
    if (r.raw() == nullptr && PQstatus(conn) != CONNECTION_OK) break;
  }
  if (PQexitPipelineMode(conn) != 1 && !error) error = ErrorOf(conn, nullptr);
  if (error) return *error;
  return results;
}

Outcome<Unit> PgExecScript(PGconn* conn, const char* sql) {
  ++ThisThreadRoundTrips().postgres;
  PgResult result(PQexec(conn, sql));
  if (Succeeded(result.raw())) return Unit{};
  return ErrorOf(conn, result.raw());
}

PgPool::PgPool(std::string conninfo, std::size_t size, Millis acquire_timeout)
    : conninfo_(std::move(conninfo)),
      size_(size == 0 ? 1 : size),
      acquire_timeout_(acquire_timeout) {}

PgPool::~PgPool() {
  std::lock_guard lock(mu_);
  for (PgSession* session : idle_) {
    PQfinish(session->conn);
    delete session;
  }
}

PgPool::Conn::~Conn() {
  if (session_ != nullptr) pool_->Return(session_);
}

PGconn* PgPool::Connect(std::string* error) {
  // connect_timeout comes first so that one given in the caller's conninfo wins; the dbname
  // entry is expanded as a full connection string (key=value or postgresql:// URI).
  const char* keys[] = {"connect_timeout", "dbname", nullptr};
  const char* values[] = {"3", conninfo_.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 1);
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    *error = "PostgreSQL unavailable: " + Trimmed(conn ? PQerrorMessage(conn) : "out of memory");
    if (conn) PQfinish(conn);
    return nullptr;
  }
  // A statement never waits forever (e.g. behind a crashed peer's row lock).
  // plan_cache_mode: the prepared statements are planned once per connection. Left to
  // itself PostgreSQL re-plans some of them on every call (a seat page's generic plan, with
  // its LIMIT unknown, looks dearer than the custom ones), which cost ~0.7 ms of CPU a call.
  auto set = PgExecScript(conn,
                          "SET statement_timeout = 10000; SET client_min_messages = warning;"
                          " SET plan_cache_mode = force_generic_plan");
  if (!set.ok()) {
    *error = set.error().message;
    PQfinish(conn);
    return nullptr;
  }
  return conn;
}

Outcome<PgPool::Conn> PgPool::Acquire() {
  std::unique_lock lock(mu_);
  const bool got =
      freed_.wait_for(lock, acquire_timeout_, [&] { return !idle_.empty() || open_ < size_; });
  if (!got) {
    return AppError{ErrorCode::kUnavailable, "no PostgreSQL connection came free within " +
                                                 std::to_string(acquire_timeout_.count()) + " ms"};
  }
  if (!idle_.empty()) {
    PgSession* session = idle_.back();
    idle_.pop_back();
    return Conn(this, session);
  }
  ++open_;
  lock.unlock();
  std::string error;
  PGconn* conn = Connect(&error);
  if (conn == nullptr) {
    lock.lock();
    --open_;
    freed_.notify_one();
    return AppError{ErrorCode::kUnavailable, error};
  }
  return Conn(this, new PgSession{conn, {}});
}

void PgPool::Warm(std::size_t count) {
  std::vector<Outcome<Conn>> opened;  // held together so that each Acquire opens a new one
  for (std::size_t i = 0; i < std::min(count, size_); ++i) {
    opened.push_back(Acquire());
    if (!opened.back().ok()) break;
  }
}

void PgPool::Return(PgSession* session) {
  PGconn* conn = session->conn;
  const bool reusable = PQstatus(conn) == CONNECTION_OK &&
                        PQtransactionStatus(conn) == PQTRANS_IDLE &&
                        PQpipelineStatus(conn) == PQ_PIPELINE_OFF;
  if (!reusable) {
    PQfinish(conn);
    delete session;
  }
  std::lock_guard lock(mu_);
  if (reusable) {
    idle_.push_back(session);
  } else {
    --open_;
  }
  freed_.notify_one();
}

}  // namespace latch::demo

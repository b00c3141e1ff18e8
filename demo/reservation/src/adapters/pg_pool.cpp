#include "adapters/pg_pool.h"

#include <charconv>
#include <cstring>
#include <utility>

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

Outcome<PgResult> PgExec(PGconn* conn, const char* sql, const PgParams& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  PgResult result(PQexecParams(conn, sql, static_cast<int>(values.size()), nullptr, values.data(),
                               nullptr, nullptr, 0));
  ExecStatusType status = result.raw() ? PQresultStatus(result.raw()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  return ErrorOf(conn, result.raw());
}

Outcome<Unit> PgExecScript(PGconn* conn, const char* sql) {
  PgResult result(PQexec(conn, sql));
  ExecStatusType status = result.raw() ? PQresultStatus(result.raw()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return Unit{};
  return ErrorOf(conn, result.raw());
}

PgPool::PgPool(std::string conninfo, std::size_t size, Millis acquire_timeout)
    : conninfo_(std::move(conninfo)),
      size_(size == 0 ? 1 : size),
      acquire_timeout_(acquire_timeout) {}

PgPool::~PgPool() {
  std::lock_guard lock(mu_);
  for (PGconn* conn : idle_) PQfinish(conn);
}

PgPool::Conn::~Conn() {
  if (conn_ != nullptr) pool_->Return(conn_);
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
  auto set = PgExecScript(conn, "SET statement_timeout = 10000; SET client_min_messages = warning");
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
    PGconn* conn = idle_.back();
    idle_.pop_back();
    return Conn(this, conn);
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
  return Conn(this, conn);
}

void PgPool::Return(PGconn* conn) {
  const bool reusable =
      PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) == PQTRANS_IDLE;
  if (!reusable) PQfinish(conn);
  std::lock_guard lock(mu_);
  if (reusable) {
    idle_.push_back(conn);
  } else {
    --open_;
  }
  freed_.notify_one();
}

}  // namespace latch::demo

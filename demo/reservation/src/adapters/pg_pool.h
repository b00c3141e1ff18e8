#pragma once
// A small pool of libpq connections, prepared statements, and pipelines of statements.
//
// libpq calls block, so everything here runs on the HTTP adapter's worker threads (never on an
// Asio I/O thread). Connections are opened lazily, up to `size` (Warm() opens some at start);
// Acquire() waits (bounded) for a free one. A connection that broke, or that is returned
// inside a transaction or a pipeline, is closed instead of being reused.
//
// Round trips are the cost that matters on a loaded machine (each one is a wake-up of the
// backend and of our worker), so statements are prepared once per connection (PgStatement)
// and a request sends what it knows it will run as one pipeline (PgPipeline): BEGIN, the
// statements and, when nothing needs to be looked at in between, COMMIT.
#include <libpq-fe.h>

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "app/outcome.h"
#include "app/ports.h"

namespace latch::demo {

// Owns one PGresult.
class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r, &PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  bool null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  // Valid while this PgResult lives.
  std::string_view text(int row, int col) const {
    return {PQgetvalue(r_.get(), row, col),
            static_cast<std::size_t>(PQgetlength(r_.get(), row, col))};
  }
  std::int64_t int64(int row, int col) const;  // 0 when null or not a number
  std::int64_t affected() const;               // rows an INSERT/UPDATE/DELETE touched
  PGresult* raw() const { return r_.get(); }

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> r_;
};

using PgParams = std::vector<std::optional<std::string>>;  // nullopt: SQL NULL

// A statement prepared under `name` on each connection the first time it runs there. Define
// them as constants with static storage: a connection remembers the ones it has by address.
struct PgStatement {
  const char* name;
  const char* sql;  // $1..$n, text parameters
};

// One connection and the statements prepared on it.
struct PgSession {
  PGconn* conn = nullptr;
  std::unordered_set<const PgStatement*> prepared;
};

// One statement of a pipeline: a prepared one, or (statement == nullptr) `sql` without
// parameters such as BEGIN, SAVEPOINT or COMMIT.
struct PgCall {
  const PgStatement* statement = nullptr;
  PgParams params;
  const char* sql = nullptr;
};

// Runs one statement (text parameters $1..$n). Errors: kUnavailable when the connection is
// gone or the server is shutting down, kConflict on a deadlock or serialization failure,
// kInternal otherwise (with PostgreSQL's message).
Outcome<PgResult> PgExec(PGconn* conn, const char* sql, const PgParams& params);
// The same for a prepared statement (prepared on this session first if need be).
Outcome<PgResult> PgExec(PgSession& session, const PgStatement& statement,
                         const PgParams& params);
// Sends every call, then one Sync, and reads every result: one round trip. The results, one
// per call, when all succeeded; else the first error (the calls after a failed one are not
// run; an open transaction is then aborted and must be rolled back).
Outcome<std::vector<PgResult>> PgPipeline(PgSession& session, const std::vector<PgCall>& calls);
// Runs a script of statements (the simple query protocol; no parameters).
Outcome<Unit> PgExecScript(PGconn* conn, const char* sql);

class PgPool {
 public:
  PgPool(std::string conninfo, std::size_t size, Millis acquire_timeout);
  ~PgPool();
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  // A connection taken from the pool, given back when destroyed.
  class Conn {
   public:
    Conn(PgPool* pool, PgSession* session) : pool_(pool), session_(session) {}
    Conn(Conn&& other) noexcept : pool_(other.pool_), session_(other.session_) {
      other.session_ = nullptr;
    }
    Conn& operator=(Conn&&) = delete;
    Conn(const Conn&) = delete;
    ~Conn();
    PGconn* get() const { return session_->conn; }
    PgSession& session() const { return *session_; }

   private:
    PgPool* pool_;
    PgSession* session_;
  };

  // kUnavailable when no connection could be opened or none came free in time.
  Outcome<Conn> Acquire();
  // Opens connections until `count` are open (at most the pool's size), so that the first
  // requests after a start do not pay for the connection set-up. Failures are left to the
  // requests (a connection is opened again when one is needed).
  void Warm(std::size_t count);

 private:
  PGconn* Connect(std::string* error);
  void Return(PgSession* session);

  const std::string conninfo_;
  const std::size_t size_;
  const Millis acquire_timeout_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<PgSession*> idle_;
  std::size_t open_ = 0;  // idle + checked out
};

}  // namespace latch::demo

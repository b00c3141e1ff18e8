#pragma once
// A small pool of libpq connections and a checked way to run one statement.
//
// libpq calls block, so everything here runs on the HTTP adapter's worker threads (never on an
// Asio I/O thread). Connections are opened lazily, up to `size`; Acquire() waits (bounded) for
// a free one. A connection that broke, or that is returned inside a transaction, is closed
// instead of being reused.
#include <libpq-fe.h>

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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

// Runs one statement (text parameters $1..$n). Errors: kUnavailable when the connection is
// gone or the server is shutting down, kConflict on a deadlock or serialization failure,
// kInternal otherwise (with PostgreSQL's message).
Outcome<PgResult> PgExec(PGconn* conn, const char* sql, const PgParams& params);
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
    Conn(PgPool* pool, PGconn* conn) : pool_(pool), conn_(conn) {}
    Conn(Conn&& other) noexcept : pool_(other.pool_), conn_(other.conn_) { other.conn_ = nullptr; }
    Conn& operator=(Conn&&) = delete;
    Conn(const Conn&) = delete;
    ~Conn();
    PGconn* get() const { return conn_; }

   private:
    PgPool* pool_;
    PGconn* conn_;
  };

  // kUnavailable when no connection could be opened or none came free in time.
  Outcome<Conn> Acquire();

 private:
  PGconn* Connect(std::string* error);
  void Return(PGconn* conn);

  const std::string conninfo_;
  const std::size_t size_;
  const Millis acquire_timeout_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<PGconn*> idle_;
  std::size_t open_ = 0;  // idle + checked out
};

}  // namespace latch::demo

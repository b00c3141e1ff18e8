#pragma once
// A real PostgreSQL server for tests: initdb in a fresh temp dir, then `postgres` on
// 127.0.0.1 and a free port picked at run time (its unix socket in the temp dir too, never
// /var/run). Stopped (fast shutdown) and the directory removed by the destructor.
//
// initdb and postgres refuse to run as root. As root (CI), the temp dir is given to the
// `postgres` system user and both run under its uid/gid: set in the forked child before exec,
// which is what `runuser -u postgres` does, but keeps the postmaster our direct child so that
// we can signal and reap it, and so that it dies with the test process (PR_SET_PDEATHSIG).
#include <sys/types.h>

#include <string>
#include <vector>

namespace latch::demo::test {

class PostgresServer {
 public:
  // `bindir`: where initdb and postgres live (e.g. /usr/lib/postgresql/15/bin).
  explicit PostgresServer(std::string bindir);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  bool ok() const { return pid_ > 0 && error_.empty(); }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  // A libpq connection string for `database` (user "latch", trust authentication).
  std::string Conninfo(const std::string& database) const;

  // A new, empty database; "" and error() on failure.
  std::string CreateDatabase();
  void DropDatabase(const std::string& name);
  // Runs SQL as the superuser in `database`; false and *error on failure.
  bool Exec(const std::string& database, const std::string& sql, std::string* error) const;

 private:
  bool Start(int port, bool* port_taken);
  // fork + (drop to the postgres user when root) + exec, output appended to log_path_.
  pid_t Spawn(const std::vector<std::string>& argv);
  std::string LogTail() const;

  std::string bindir_;
  std::string dir_;
  std::string log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
  int next_database_ = 0;
  uid_t uid_ = 0;  // the user that runs the server (postgres when we are root)
  gid_t gid_ = 0;
  bool drop_privileges_ = false;
  std::string error_;
};

}  // namespace latch::demo::test

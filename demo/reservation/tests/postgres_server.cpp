#include "postgres_server.h"

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/free_port.h"

namespace latch::demo::test {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kInitdbTimeout{60000};
constexpr milliseconds kReadyTimeout{30000};
constexpr milliseconds kStopTimeout{10000};
constexpr milliseconds kPoll{20};

// Waits (bounded) for the child to exit; its wait status, or -1 on timeout.
int WaitExit(pid_t pid, milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  int status = 0;
  while (SteadyClock::now() < deadline) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0) return -2;
    std::this_thread::sleep_for(kPoll);
  }
  return -1;
}

}  // namespace

PostgresServer::PostgresServer(std::string bindir) : bindir_(std::move(bindir)) {
  if (::access((bindir_ + "/initdb").c_str(), X_OK) != 0) {
    error_ = "no PostgreSQL server binaries in " + bindir_ +
             " (install them with `apt-get install postgresql`)";
    return;
  }
  char tmpl[] = "/tmp/latch-demo-pg-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    error_ = "mkdtemp failed";
    return;
  }
  dir_ = tmpl;
  log_path_ = dir_ + "/server.log";
  if (::geteuid() == 0) {
    const passwd* pw = ::getpwnam("postgres");
    if (pw == nullptr) {
      error_ =
          "running as root, but there is no `postgres` user to run PostgreSQL as "
          "(install the postgresql package)";
      return;
    }
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    drop_privileges_ = true;
    if (::chown(dir_.c_str(), uid_, gid_) != 0) {
      error_ = "cannot chown " + dir_ + " to postgres";
      return;
    }
  }
  { std::ofstream create(log_path_); }
  if (drop_privileges_ && ::chown(log_path_.c_str(), uid_, gid_) != 0) {
    error_ = "cannot chown the log file";
    return;
  }

  pid_t initdb = Spawn({bindir_ + "/initdb", "-D", dir_ + "/data", "-U", "latch", "-A", "trust",
                        "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"});
  int status = initdb > 0 ? WaitExit(initdb, kInitdbTimeout) : -2;
  if (status == -1) ::kill(initdb, SIGKILL), ::waitpid(initdb, nullptr, 0);
  if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error_ = "initdb failed (status " + std::to_string(status) + "):\n" + LogTail();
    return;
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    int port = latch::test::FreePort();
    bool taken = false;
    if (port != 0 && Start(port, &taken)) return;
    if (!taken) return;  // error_ says why
  }
}

PostgresServer::~PostgresServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGINT);  // fast shutdown: disconnect clients, checkpoint, exit
    if (WaitExit(pid_, kStopTimeout) == -1) {
      ::kill(pid_, SIGQUIT);  // immediate shutdown
      if (WaitExit(pid_, kStopTimeout) == -1) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
      }
    }
  }
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

pid_t PostgresServer::Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const std::string& arg : argv) cargv.push_back(const_cast<char*>(arg.c_str()));
  cargv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const bool drop = drop_privileges_;
  const uid_t uid = uid_;
  const gid_t gid = gid_;
  const std::string& log = log_path_;
  const std::string& dir = dir_;
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  // Child: only async-signal-safe calls from here on.
  int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
  int null_in = ::open("/dev/null", O_RDONLY);
  if (fd >= 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
  }
  if (null_in >= 0) ::dup2(null_in, STDIN_FILENO);
  if (drop) {
    gid_t groups[] = {gid};
    if (::setgroups(1, groups) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(126);
  }
  if (::chdir(dir.c_str()) != 0) ::_exit(126);
  // After setuid (a credential change clears it): SIGQUIT is postgres' immediate shutdown.
  ::prctl(PR_SET_PDEATHSIG, SIGQUIT);
  if (::getppid() != parent) ::_exit(127);
  ::execv(cargv[0], cargv.data());
  ::_exit(127);
}

bool PostgresServer::Start(int port, bool* port_taken) {
  pid_ = Spawn({bindir_ + "/postgres",
                "-D",
                dir_ + "/data",
                "-p",
                std::to_string(port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=" + dir_,
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
                "-c",
                "dynamic_shared_memory_type=mmap",
                "-c",
                "log_min_messages=warning"});
  if (pid_ <= 0) {
    error_ = "fork failed";
    return false;
  }
  port_ = port;
  const std::string probe = Conninfo("postgres") + " connect_timeout=2";
  const auto deadline = SteadyClock::now() + kReadyTimeout;
  while (SteadyClock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      std::string log = LogTail();
      *port_taken = log.find("could not bind") != std::string::npos ||
                    log.find("already in use") != std::string::npos;
      error_ = "postgres exited during start-up (status " + std::to_string(status) + "):\n" + log;
      return false;
    }
    if (PQping(probe.c_str()) == PQPING_OK) {
      error_.clear();
      return true;
    }
    std::this_thread::sleep_for(kPoll);
  }
  error_ = "postgres did not accept connections within 30 s:\n" + LogTail();
  return false;
}

std::string PostgresServer::LogTail() const {
  std::ifstream in(log_path_);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  return s.size() > 3000 ? "..." + s.substr(s.size() - 3000) : s;
}

std::string PostgresServer::Conninfo(const std::string& database) const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=" + database + " user=latch";
}

bool PostgresServer::Exec(const std::string& database, const std::string& sql,
                          std::string* error) const {
  PGconn* conn = PQconnectdb((Conninfo(database) + " connect_timeout=5").c_str());
  bool ok = PQstatus(conn) == CONNECTION_OK;
  if (!ok) {
    *error = PQerrorMessage(conn);
  } else {
    PGresult* r = PQexec(conn, sql.c_str());
    ExecStatusType s = PQresultStatus(r);
    ok = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
    if (!ok) *error = PQresultErrorMessage(r);
    PQclear(r);
  }
  PQfinish(conn);
  return ok;
}

std::string PostgresServer::CreateDatabase() {
  std::string name = "demo_" + std::to_string(++next_database_);
  std::string error;
  if (!Exec("postgres", "CREATE DATABASE " + name, &error)) {
    error_ = "CREATE DATABASE failed: " + error;
    return "";
  }
  return name;
}

void PostgresServer::DropDatabase(const std::string& name) {
  std::string ignored;
  Exec("postgres", "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", &ignored);
}

}  // namespace latch::demo::test

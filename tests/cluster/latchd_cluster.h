#pragma once
// Three latchd processes on loopback as one Raft cluster (raft-peers; docs/CLUSTER.md), for
// the process tests of tests/cluster/. Ports are picked at run time; the Raft directories live
// under a temporary directory removed at the end; every wait is a condition with a deadline.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "support/eventually.h"
#include "support/free_port.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::test {

// Elections take one to two election timeouts (1 s by default), a split vote one more.
inline constexpr std::chrono::milliseconds kElection{15000};

inline std::string Bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// One command on a fresh connection; the raw reply, or "<no reply: ...>".
inline std::string Cmd(int port, const std::vector<std::string>& args) {
  RawConnection conn(port, std::chrono::milliseconds(5000));
  return conn.CommandArgs(args);
}

// One command on a fresh connection to a node that may be cut off: its reply, or nullopt when
// the connection was refused or closed or nothing came within 1.5 s.
inline std::optional<std::string> Probe(int port, const std::vector<std::string>& args) {
  RawConnection conn(std::chrono::milliseconds(1500));
  if (!conn.Connect(port) || !conn.Send(RawConnection::Encode(args))) return std::nullopt;
  return conn.ReadReply();
}

// The integer of a ":n\r\n" reply; INT64_MIN for anything else.
inline std::int64_t IntegerOf(const std::string& reply) {
  if (reply.size() < 4 || reply[0] != ':') return INT64_MIN;
  return std::stoll(reply.substr(1));
}

class Cluster {
 public:
  static constexpr int kNodes = 3;  // the default size

  // `extra_args`: more directives for every node, e.g. {"--raft-sentinel-name", "locks"}.
  explicit Cluster(std::vector<std::string> extra_args = {}, int nodes = kNodes)
      : extra_args_(std::move(extra_args)), size_(nodes) {
    dir_ = std::filesystem::temp_directory_path() /
           ("latch-cluster-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(dir_);
    std::set<int> used;
    auto pick = [&] {
      for (int i = 0; i < 100; ++i) {
        const int p = FreePort();
        if (p != 0 && used.insert(p).second) return p;
      }
      return 0;
    };
    for (int i = 0; i < size_; ++i) {
      raft_ports_.push_back(pick());
      client_ports_.push_back(pick());
    }
    for (int i = 0; i < size_; ++i) {
      if (!peers_.empty()) peers_ += ' ';
      peers_ += std::to_string(i + 1) + "=127.0.0.1:" + std::to_string(raft_ports_[i]) + ":" +
                std::to_string(client_ports_[i]);
    }
    nodes_.resize(static_cast<std::size_t>(size_));
  }
  ~Cluster() {
    nodes_.clear();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Starts every node; false (with the reason in *error) when one does not serve.
  bool Start(std::string* error) {
    for (int i = 0; i < size_; ++i) {
      if (!StartNode(i, error)) return false;
    }
    return true;
  }
  // Starts node i (again, after a kill: on its Raft directory as it was left), with `more`
  // directives after the cluster's own (a later one wins).
  bool StartNode(int i, std::string* error, const std::vector<std::string>& more = {}) {
    const std::string raft_dir = RaftDir(i).string();
    std::filesystem::create_directories(raft_dir);
    std::vector<std::string> argv{LATCHD_PATH, "--port", std::to_string(client_ports_[i]), "--bind",
                                  "127.0.0.1"};
    argv.insert(argv.end(), {"--raft-id", std::to_string(i + 1), "--raft-peers", peers_,
                             "--raft-dir", raft_dir});
    if (!metrics_ports_.empty()) {
      argv.insert(argv.end(), {"--metrics-port", std::to_string(metrics_ports_[i])});
    }
    argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
    argv.insert(argv.end(), more.begin(), more.end());
    nodes_[i] = std::make_unique<ServerProcess>("latchd node " + std::to_string(i + 1),
                                                std::move(argv), client_ports_[i]);
    if (!nodes_[i]->ok()) {
      *error = nodes_[i]->error();
      return false;
    }
    return true;
  }

  int size() const { return size_; }
  int port(int i) const { return client_ports_[i]; }
  int raft_port(int i) const { return raft_ports_[i]; }
  // Before Start: every node serves /metrics on a port of its own (metrics_port).
  void EnableMetrics() {
    for (int i = 0; i < size_; ++i) metrics_ports_.push_back(FreePort());
  }
  int metrics_port(int i) const { return metrics_ports_[i]; }
  // raft-peers as every node gets it, and the directory under which node i keeps
  // "node<i+1>" (more nodes, e.g. one joining by RAFT ADD, can live there too).
  const std::string& peers() const { return peers_; }
  const std::filesystem::path& dir() const { return dir_; }
  pid_t pid(int i) const { return nodes_[i]->pid(); }
  // SIGTERM, then waits (bounded) for the exit: the wait status, or -1 if it had to be killed.
  int Stop(int i) {
    const int status = nodes_[i]->Stop();
    nodes_[i].reset();
    return status;
  }
  std::filesystem::path RaftDir(int i) const { return dir_ / ("node" + std::to_string(i + 1)); }
  bool alive(int i) const { return nodes_[i] != nullptr; }
  void Kill9(int i) {
    ::kill(nodes_[i]->pid(), SIGKILL);
    nodes_[i].reset();  // reaps it
  }

  void Signal(int i, int signal) { ::kill(nodes_[i]->pid(), signal); }
  // SIGSTOP takes effect asynchronously, thread by thread: true once every thread of node i
  // is stopped ('T' in /proc/PID/task/TID/stat), within a deadline.
  bool WaitStopped(int i) const {
    const std::filesystem::path tasks = "/proc/" + std::to_string(nodes_[i]->pid()) + "/task";
    return Eventually(
        [&] {
          std::error_code ec;
          for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
            std::ifstream stat(task.path() / "stat");
            std::string line;
            std::getline(stat, line);
            const auto close = line.rfind(')');
            if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'T') {
              return false;
            }
          }
          return !ec;
        },
        std::chrono::milliseconds(5000));
  }
  // True once node i's process has exited by itself and is not reaped yet (a zombie).
  bool Exited(int i) const {
    std::ifstream stat("/proc/" + std::to_string(nodes_[i]->pid()) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
  }
  // Waits (bounded) for node i to exit by itself; its wait status, or -1 if it had to be killed.
  int WaitExit(int i) {
    const int status = nodes_[i]->WaitExit();
    nodes_[i].reset();
    return status;
  }
  std::string Log(int i) const { return nodes_[i] ? nodes_[i]->Log() : ""; }

  // The node that answers ROLE as a master while every other live node answers as a replica
  // of it ("connected"): -1 when there is none (yet). Node `skip` (stopped) is not asked.
  int Leader(int skip = -1) const {
    int leader = -1;
    for (int i = 0; i < size_; ++i) {
      if (!alive(i) || i == skip) continue;
      if (Cmd(port(i), {"ROLE"}).starts_with("*3\r\n$6\r\nmaster\r\n")) {
        if (leader != -1) return -1;
        leader = i;
      }
    }
    if (leader == -1) return -1;
    const std::string follower_role = "*5\r\n$5\r\nslave\r\n" + Bulk("127.0.0.1") + ":" +
                                      std::to_string(port(leader)) + "\r\n" + Bulk("connected");
    for (int i = 0; i < size_; ++i) {
      if (i == leader || !alive(i) || i == skip) continue;
      if (!Cmd(port(i), {"ROLE"}).starts_with(follower_role)) return -1;
    }
    return leader;
  }

  int WaitLeader(int skip = -1, std::chrono::milliseconds limit = kElection) const {
    int leader = -1;
    Eventually([&] { return (leader = Leader(skip)) != -1; }, limit);
    return leader;
  }

  std::string Logs() const {
    std::string all;
    for (int i = 0; i < size_; ++i) {
      if (alive(i)) all += "--- node " + std::to_string(i + 1) + "\n" + nodes_[i]->Log();
    }
    return all;
  }

 private:
  static inline int counter_ = 0;
  std::vector<std::string> extra_args_;
  int size_;
  std::filesystem::path dir_;
  std::vector<int> raft_ports_, client_ports_, metrics_ports_;
  std::string peers_;
  std::vector<std::unique_ptr<ServerProcess>> nodes_;
};

}  // namespace latch::test

#include "cluster/raft_nodelay.h"

#include <uv.h>

#include <atomic>

namespace latch::cluster {
namespace {

// libraft 0.15's TCP transport (src/uv_tcp.c) never sets TCP_NODELAY. A leader's
// AppendEntries and a follower's replies are small writes, often two in a row on one
// connection, and Nagle holds the second until the first is acknowledged; the peer delays
// that ACK (up to 40 ms on Linux). Measured (bench/cluster.py's lock loop, 50 clients, 3
// nodes on 2 cores, same binary otherwise): p99 45-47 ms with Nagle on, 8-12 ms with it off.
// The probe connections (leader_probe.cpp) are not libraft's and stay as they are: idle.
//
// What is wrapped is process-wide, kept once: raft_uv_tcp_init's listen and connect, and the
// callbacks libraft passes them (uvRecvAcceptCb and uvClientConnectCb in src/uv_recv.c and
// src/uv_send.c), each the same function for every node in the process.
std::atomic<int (*)(raft_uv_transport*, raft_uv_accept_cb)> g_listen{nullptr};
std::atomic<int (*)(raft_uv_transport*, raft_uv_connect*, raft_id, const char*, raft_uv_connect_cb)>
    g_connect{nullptr};
std::atomic<raft_uv_accept_cb> g_accept_cb{nullptr};
std::atomic<raft_uv_connect_cb> g_connect_cb{nullptr};

void NoDelay(uv_stream_t* stream) {
  if (stream != nullptr && stream->type == UV_TCP) {
    uv_tcp_nodelay(reinterpret_cast<uv_tcp_t*>(stream), 1);
  }
}

void Accepted(raft_uv_transport* t, raft_id id, const char* address, uv_stream_t* stream) {
  NoDelay(stream);
  g_accept_cb.load()(t, id, address, stream);
}

void Connected(raft_uv_connect* req, uv_stream_t* stream, int status) {
  if (status == 0) NoDelay(stream);
  g_connect_cb.load()(req, stream, status);
}

int Listen(raft_uv_transport* t, raft_uv_accept_cb cb) {
  g_accept_cb.store(cb);
  return g_listen.load()(t, Accepted);
}

int Connect(raft_uv_transport* t, raft_uv_connect* req, raft_id id, const char* address,
            raft_uv_connect_cb cb) {
  g_connect_cb.store(cb);
  return g_connect.load()(t, req, id, address, Connected);
}

}  // namespace

void DisableNagle(raft_uv_transport* t) {
  g_listen.store(t->listen);
  g_connect.store(t->connect);
  t->listen = Listen;
  t->connect = Connect;
}

}  // namespace latch::cluster

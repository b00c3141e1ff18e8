#pragma once
// One client socket, pinned to one worker for its whole life.
//
// Flow: read a batch, run the complete requests in it, write their replies at once, and
// read again only when that write has completed (backpressure). Requests already read run
// on while a write is under way, until the client's pending output reaches kPauseOutput
// (or the configured output limits, if larger): a client that does not read cannot make
// the server hold its whole pipeline's replies. A long batch yields to the worker's other
// clients every 1 MB of replies or 1024 commands.
// A client parked by a blocking command keeps reading (to notice a disconnect, buffering
// further requests up to client-query-buffer-limit) but runs nothing until it is unparked.
//
// Output, as Redis keeps its reply apart from what is on the wire (sentlen): replies are
// appended to out_; once out_ holds kSealAbove bytes it is moved, whole, to the back of
// sealed_ (a big reply is never copied again to make room for the next); a write takes
// the oldest of sealed_, or else all of out_, into sending_ and writes from there,
// tracking sent_. A reply that arrives outside the read-execute-write cycle (a parked
// LOCK.ACQUIRE granted, its timeout) is appended to out_ while a write may be in flight,
// and goes out after everything before it.
//
// On a Raft follower, the first command that needs the leader turns the connection into a
// relay to the leader's client port for the rest of its life (net/connection_relay.cpp,
// docs/CLUSTER.md "Forwarding"): from then on the client's bytes go to the leader and the
// leader's come back through out_, after the replies of commands answered here before.
// Included only by net/.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "commands/command_table.h"
#include "commands/context.h"
#include "latch/protocol/request_parser.h"
#include "net/client_stream.h"
#include "net/output_limit.h"
#include "net/read_buffer.h"
#include "server_state.h"

namespace latch {

class Worker;
struct RelayLink;  // net/leader_relay.h

class Connection : public std::enable_shared_from_this<Connection>, public BlockHost {
 public:
  // `tls` null: a plain TCP client; else a client of the TLS port, served once its
  // handshake is done (net/client_stream.h).
  Connection(boost::asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> tls,
             ServerState& state, Worker& worker, std::shared_ptr<ClientInfo> info);
  ~Connection() override;

  void Start();
  // Closes the socket; pending handlers finish with an error. Worker thread only.
  void Close();
  // Worker thread only, from the periodic tick: closes the connection when it has been
  // idle longer than timeout_s (0: never), or when its pending output has stayed over the
  // soft output limit for too long.
  void OnTick(std::int64_t now_ms, int timeout_s);

  std::shared_ptr<BlockedClient> Block(std::int64_t timeout_ms) override;

 private:
  // Decides the next step after any event: run buffered requests, write, read or close.
  void Pump();
  // Pump() behind the exception boundary: a failure (std::bad_alloc) closes this client
  // only, and the worker keeps serving the others.
  void SafePump();
  // TLS: the handshake, closed if not done within tls-handshake-timeout.
  void StartHandshake();
  void StartRead();
  void OnRead(const boost::system::error_code& ec, std::size_t n);
  void StartWrite();
  void OnWrite(const boost::system::error_code& ec, std::size_t n);
  enum class InputState { kDone, kPaused, kYielded };
  InputState ProcessInput();
  void Execute(std::span<const std::string_view> args);
  void UpdateParserLimits();
  // The parked client's reply (null `write`: none, it disconnected); it waits for journal
  // record `journal_seq` and for whatever `write` itself appends.
  void Unblock(const BlockedClient::Writer& write, std::uint64_t journal_seq);
  // Appends the messages publishers left in this client's mailbox (pubsub/subscriber.h) to
  // out_, as Unblock does with a grant; closes the client when its mailbox overflowed.
  void DeliverPushes();
  // Replies not yet on the wire: out_ plus the unsent part of sending_ (Redis's omem).
  std::size_t PendingOutput() const {
    return out_.size() + sealed_bytes_ + sending_.size() - sent_;
  }
  // Bytes the read and output buffers hold (their capacities): CLIENT LIST's tot-mem.
  std::size_t HeldBufferBytes() const {
    return rbuf_.capacity() + out_.capacity() + sending_.capacity() + sealed_bytes_;
  }
  // Moves a large out_ to sealed_.
  void SealIfLarge();
  // client-output-buffer-limit: logs and closes the client when it is over; true then.
  // kReadClock: read the clock only if a limit is set.
  static constexpr std::int64_t kReadClock = -1;
  bool CloseIfOverOutputLimit(std::int64_t now_ms);
  void PublishBufferSizes();
  // Pump's publication: skipped while the buffers are only a small reply in flight, or idle
  // as last published (a request-reply round trip publishes nothing in the steady state).
  void PublishBufferSizesIfChanged();
  // ClientInfo::kill and ::push for other threads (CLIENT KILL, MONITOR); under clients.mu.
  void SetRemoteControls();
  // appendfsync always: true when the replies wait for journal record journal_seq_; StartWrite
  // runs again once it is on disk (journal/server_hooks.h).
  bool HoldForJournal();

  // Follower forwarding (net/connection_relay.cpp). MaybeStartRelay: true when `args`, the
  // command at the front of rbuf_, switched the connection to the leader (it is not run
  // here). Pump() hands over to PumpRelay() from then on.
  bool MaybeStartRelay(std::span<const std::string_view> args);
  void ConnectRelay(const std::string& host, int port);
  void OnRelayConnected(const boost::system::error_code& ec);
  void PumpRelay();
  void StartRelaySend();
  void StartRelayReceive();
  void OnRelayReceived(const boost::system::error_code& ec, std::size_t n);
  // Closes the client when the node follows another leader, or none (every 100 ms).
  void WatchRelayLeader();
  // After AUTH or HELLO ran: keeps how the client logged in, to log the relay in the same.
  void NoteLogin(std::span<const std::string_view> args, std::size_t reply_start);

  ClientStream stream_;
  ServerState& state_;
  Worker& worker_;
  Session session_;
  protocol::RequestParser parser_;
  protocol::ReplyWriter writer_;
  ReadBuffer rbuf_;
  std::string out_;      // replies being appended (ReplyWriter's target)
  std::string sending_;  // replies being written; sent_ bytes of it are on the wire
  std::size_t sent_ = 0;
  std::deque<std::string> sealed_;  // full buffers, oldest first, written before out_
  std::size_t sealed_bytes_ = 0;
  OutputLimitTracker output_limit_;
  bool closed_ = false;
  bool reading_ = false;
  bool writing_ = false;
  bool resume_posted_ = false;  // a yielded ProcessInput will go on from the queue
  bool parser_authenticated_ = true;
  bool handshaking_ = false;  // TLS handshake under way (block_timer_ times it)
  TimeSnapshot now_{};      // taken when the last read completed
  bool fresh_now_ = false;  // now_ not yet used by a command
  // The idle state PublishBufferSizes last published (0: not idle then): buffer bytes held.
  std::size_t published_idle_mem_ = 0;
  std::size_t published_peak_ = 0;
  std::uint64_t journal_seq_ = 0;  // the last journal record the pending replies depend on
  std::shared_ptr<BlockedClient> blocked_;
  // Parked clients' timeouts, the TLS handshake bound, the relay's connect bound and leader
  // watch: never two at once.
  boost::asio::steady_timer block_timer_;
  bool relay_capable_ = false;  // a cluster node: commands are checked for the relay
  std::unique_ptr<RelayLink> relay_;
  std::string relay_login_;  // RelayLoginCommand of the client's last login here
};

}  // namespace latch

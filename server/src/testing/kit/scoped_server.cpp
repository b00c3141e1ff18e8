// ScopedServer: lifecycle, the in-process runner and the data helpers. Checks are in
// checks.cpp; time, counters and faults in controls.cpp.
#include "latch/testing/scoped_server.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "commands/command_table.h"
#include "commands/context.h"
#include "latch/protocol/reply_reader.h"
#include "server_state.h"
#include "testing/test_mode.h"

namespace latch {
ServerState& InternalState(Server& server);  // server.cpp
}  // namespace latch

namespace latch::testing {

// A client that is not a connection: one session (never in the client list), replies read
// back from a buffer. Commands run on the caller's thread through the whole dispatcher
// (checks, shard locks, key events), without a host: they never block and are never faulted
// or counted by name.
struct ScopedServer::Runner {
  Session session;
  std::string out;
  std::mutex mu;  // one in-process command at a time

  Runner() {
    session.info = std::make_shared<ClientInfo>();
    session.info->addr = "in-process";
  }

  protocol::Reply Run(ServerState& state, const std::vector<std::string>& args) {
    std::lock_guard lock(mu);
    out.clear();
    std::vector<std::string_view> views(args.begin(), args.end());
    protocol::ReplyWriter writer(&out, 2);
    CommandContext ctx{views, writer, session, state, state.clock->Now(), nullptr};
    state.commands->Dispatch(ctx);
    protocol::ReplyReaderLimits limits;
    limits.max_bulk_len = std::numeric_limits<std::int64_t>::max();
    protocol::ReplyReader reader(limits);
    reader.Feed(out);
    protocol::Reply reply;
    if (reader.Next(&reply) != protocol::ReplyReader::Status::kReply) {
      return protocol::Reply::Error("ERR no reply");
    }
    return reply;
  }
};

namespace {

protocol::Reply Expect(protocol::Reply reply, const std::vector<std::string>& args) {
  if (!reply.is_error()) return reply;
  std::string line;
  for (const auto& a : args) line += (line.empty() ? "" : " ") + a;
  throw std::runtime_error("latch::testing: '" + line + "' failed: " + reply.str);
}

}  // namespace

Options ScopedServer::DefaultOptions() {
  Options o;
  o.bind = "127.0.0.1";
  o.port = 0;
  o.io_threads = 1;
  o.shards = 4;
  o.loglevel = "warning";
  o.enable_test_commands = true;
  return o;
}

ScopedServer::ScopedServer() : ScopedServer(DefaultOptions()) {}

ScopedServer::ScopedServer(Options options) : options_(std::move(options)) {
  options_.enable_test_commands = true;
  if (!options_.clock) options_.clock = std::make_shared<ManualClock>();
  if (auto refused = PrepareTestMode(options_)) throw std::runtime_error(*refused);
  clock_ = options_.clock;
  runner_ = std::make_unique<Runner>();
  StartNew();
}

ScopedServer::~ScopedServer() {
  if (server_) server_->stop();
}

void ScopedServer::StartNew() {
  if (server_) server_->stop();
  server_.reset();
  Options o = options_;
  if (port_ != 0) o.port = port_;
  if (!password_.empty()) o.requirepass = password_;
  server_ = std::make_unique<Server>(o);
  port_ = server_->start();
  running_ = true;
}

std::string ScopedServer::addr() const { return host() + ":" + std::to_string(port_); }

std::string ScopedServer::url() const {
  return "redis://" + (password_.empty() ? "" : ":" + password_ + "@") + addr();
}

ManualClock& ScopedServer::clock() {
  auto* manual = dynamic_cast<ManualClock*>(clock_.get());
  if (manual == nullptr) throw std::logic_error("latch::testing: the server has no ManualClock");
  return *manual;
}

void ScopedServer::Stop() {
  if (!running_) return;
  server_->stop();
  running_ = false;
}

void ScopedServer::Start() {
  if (running_) return;
  if (options_.appendonly) return StartNew();  // a fresh server loads the journal
  ServerState& state = InternalState(*server_);
  {
    std::lock_guard lock(state.options_mu);
    state.options.port = port_;
  }
  port_ = server_->start();
  running_ = true;
}

void ScopedServer::Restart(Data data) {
  Stop();
  if (data == Data::kKeep) return Start();
  if (options_.appendonly) {
    const std::filesystem::path dir = options_.dir.empty() ? "." : options_.dir;
    std::filesystem::remove_all(dir / options_.appenddirname);
  }
  StartNew();
}

protocol::Reply ScopedServer::Call(const std::vector<std::string>& args) {
  return runner_->Run(InternalState(*server_), args);
}

std::string ScopedServer::Do(std::initializer_list<std::string_view> args) {
  return Do(std::vector<std::string>(args.begin(), args.end()));
}

std::string ScopedServer::Do(const std::vector<std::string>& args) { return Call(args).ToString(); }

std::optional<std::string> ScopedServer::Get(std::string_view key) {
  std::vector<std::string> args{"GET", std::string(key)};
  protocol::Reply r = Expect(Call(args), args);
  if (r.is_null()) return std::nullopt;
  return r.str;
}

void ScopedServer::Set(std::string_view key, std::string_view value, Millis ttl) {
  std::vector<std::string> args{"SET", std::string(key), std::string(value)};
  if (ttl.count() > 0) {
    args.push_back("PX");
    args.push_back(std::to_string(ttl.count()));
  }
  Expect(Call(args), args);
}

bool ScopedServer::Del(std::string_view key) {
  std::vector<std::string> args{"DEL", std::string(key)};
  return Expect(Call(args), args).integer == 1;
}

bool ScopedServer::Exists(std::string_view key) {
  std::vector<std::string> args{"EXISTS", std::string(key)};
  return Expect(Call(args), args).integer == 1;
}

std::vector<std::string> ScopedServer::Keys(std::string_view pattern) {
  std::vector<std::string> args{"KEYS", std::string(pattern)};
  std::vector<std::string> keys;
  for (const auto& e : Expect(Call(args), args).elements) keys.push_back(e.str);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::int64_t ScopedServer::Ttl(std::string_view key) {
  std::vector<std::string> args{"PTTL", std::string(key)};
  return Expect(Call(args), args).integer;
}

void ScopedServer::FlushAll() {
  std::vector<std::string> args{"FLUSHALL"};
  Expect(Call(args), args);
}

std::optional<LockState> ScopedServer::Lock(std::string_view key) {
  std::vector<std::string> args{"LOCK.INFO", std::string(key)};
  protocol::Reply r = Expect(Call(args), args);
  if (r.is_null()) return std::nullopt;
  LockState s;
  if (const auto* owner = r.Find("owner")) s.owner = owner->str;
  if (const auto* token = r.Find("token"); token != nullptr && token->is_integer()) {
    s.fencing_token = token->integer;
  }
  if (const auto* ttl = r.Find("ttl")) s.ttl_ms = ttl->integer;
  if (const auto* waiters = r.Find("waiters")) s.waiters = waiters->integer;
  return s;
}

void ScopedServer::RequireAuth(std::string_view password) {
  std::vector<std::string> args{"CONFIG", "SET", "requirepass", std::string(password)};
  Expect(Call(args), args);
  password_ = std::string(password);
}

}  // namespace latch::testing

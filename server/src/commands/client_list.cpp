#include "commands/client_list.h"

#include "commands/arg_parse.h"

namespace latch {
namespace {
// Redis's flag letters that apply to latchd, in Redis's order; N when none does.
std::string Flags(const ClientInfo& c) {
  std::string f;
  if (c.monitor.load(std::memory_order_relaxed)) f.push_back('O');
  if (c.sub.load(std::memory_order_relaxed) + c.psub.load(std::memory_order_relaxed) > 0) {
    f.push_back('P');
  }
  if (c.blocked.load(std::memory_order_relaxed)) f.push_back('b');
  if (c.unix_socket) f.push_back('U');
  if (f.empty()) f.push_back('N');
  return f;
}

std::string Size(const std::atomic<std::size_t>& v) {
  return std::to_string(v.load(std::memory_order_relaxed));
}
}  // namespace

void AppendClientLine(const ClientInfo& c, std::int64_t now_mono_ms, std::string* out) {
  const std::string* cmd = c.last_cmd.load();
  std::int64_t age = (now_mono_ms - c.created_ms) / 1000;
  std::int64_t idle = (now_mono_ms - c.last_interaction_ms.load()) / 1000;
  const ClientInfo::Buffers& b = c.buffers;
  const int sub = c.sub.load(std::memory_order_relaxed);
  const int psub = c.psub.load(std::memory_order_relaxed);
  // qbuf: bytes read and not yet run; obl: replies not yet handed to a write; oll: 1 while
  // a write is under way; omem: every reply byte not yet on the wire (what the output
  // limits compare); tot-mem: the connection's object and buffers.
  out->append("id=" + std::to_string(c.id) + " addr=" + c.addr + " laddr=" + c.laddr +
              " fd=" + std::to_string(c.fd) + " name=" + c.name + " age=" +
              std::to_string(age < 0 ? 0 : age) + " idle=" + std::to_string(idle < 0 ? 0 : idle) +
              " flags=" + Flags(c) + " db=" + std::to_string(c.db.load(std::memory_order_relaxed)) +
              " sub=" + std::to_string(sub) +
              " psub=" + std::to_string(psub) + " ssub=0 multi=-1 qbuf=" + Size(b.qbuf) +
              " qbuf-free=" + Size(b.qbuf_free) + " argv-mem=0 multi-mem=0 rbs=" + Size(b.rbs) +
              " rbp=" + Size(b.rbp) + " obl=" + Size(b.obl) + " oll=" + Size(b.oll) +
              " omem=" + Size(b.omem) + " tot-mem=" + Size(b.tot_mem) +
              " events=r cmd=" + (cmd ? *cmd : std::string("NULL")) +
              " user=" + c.user + " redir=-1 resp=" + std::to_string(c.proto.load()) +
              " lib-name=" + c.lib_name + " lib-ver=" + c.lib_ver + "\n");
}

bool ParseClientType(std::string_view name, ClientType* out) {
  if (EqualsNoCase(name, "normal")) {
    *out = ClientType::kNormal;
  } else if (EqualsNoCase(name, "pubsub")) {
    *out = ClientType::kPubSub;
  } else if (EqualsNoCase(name, "master") || EqualsNoCase(name, "replica") ||
             EqualsNoCase(name, "slave")) {
    *out = ClientType::kNone;
  } else {
    return false;
  }
  return true;
}

ClientType TypeOf(const ClientInfo& c) {
  const int subscriptions =
      c.sub.load(std::memory_order_relaxed) + c.psub.load(std::memory_order_relaxed);
  return subscriptions > 0 ? ClientType::kPubSub : ClientType::kNormal;
}

}  // namespace latch

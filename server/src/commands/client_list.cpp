#include "commands/client_list.h"

namespace latch {

void AppendClientLine(const ClientInfo& c, std::int64_t now_mono_ms, std::string* out) {
  const std::string* cmd = c.last_cmd.load();
  std::int64_t age = (now_mono_ms - c.created_ms) / 1000;
  std::int64_t idle = (now_mono_ms - c.last_interaction_ms.load()) / 1000;
  out->append("id=" + std::to_string(c.id) + " addr=" + c.addr + " laddr=" + c.laddr +
              " fd=" + std::to_string(c.fd) + " name=" + c.name + " age=" +
              std::to_string(age < 0 ? 0 : age) + " idle=" + std::to_string(idle < 0 ? 0 : idle) +
              " flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0"
              " multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=" +
              (cmd ? *cmd : std::string("NULL")) + " user=default redir=-1 resp=" +
              std::to_string(c.proto.load()) + " lib-name=" + c.lib_name +
              " lib-ver=" + c.lib_ver + "\n");
}

}  // namespace latch

#include "net/leader_relay.h"

#include <initializer_list>

#include "latch/protocol/case_fold.h"
#include "latch/protocol/request_encoder.h"

namespace latch {

bool RelayLink::SkipReplayReplies(std::string_view* data, std::string* error) {
  replay_reader.Feed(*data);
  protocol::Reply reply;
  while (replay_replies > 0) {
    switch (replay_reader.Next(&reply)) {
      case protocol::ReplyReader::Status::kNeedMore:
        *data = {};
        return true;
      case protocol::ReplyReader::Status::kError:
        *error = replay_reader.error();
        return false;
      case protocol::ReplyReader::Status::kReply:
        if (reply.type == protocol::ReplyType::kError) {
          *error = reply.str;
          return false;
        }
        --replay_replies;
        break;
    }
  }
  // The replay's last reply ended in this read: what follows it is the client's.
  data->remove_prefix(data->size() - replay_reader.buffered());
  replay_reader = protocol::ReplyReader();  // its buffer is not needed again
  return true;
}

std::string RelayLoginCommand(std::span<const std::string_view> args) {
  std::string_view user, pass;
  if (EqualsNoCase(args[0], "auth") && (args.size() == 2 || args.size() == 3)) {
    user = args.size() == 2 ? std::string_view("default") : args[1];
    pass = args.back();
  } else if (EqualsNoCase(args[0], "hello")) {
    // HELLO protover [AUTH username password] [SETNAME clientname], as the handler reads it.
    for (std::size_t j = 2; j < args.size(); ++j) {
      if (EqualsNoCase(args[j], "auth") && j + 2 < args.size()) {
        user = args[j + 1];
        pass = args[j + 2];
        j += 2;
      } else if (EqualsNoCase(args[j], "setname")) {
        ++j;
      }
    }
  }
  if (user.empty() && pass.empty()) return {};
  std::string out;
  protocol::AppendMultibulkHeader(&out, 3);
  for (std::string_view a : {std::string_view("AUTH"), user, pass}) {
    protocol::AppendBulkArgument(&out, a);
  }
  return out;
}

std::string RelaySessionReplay(const std::string& login, int proto, const std::string& name, int db,
                               int* replies) {
  std::string out;
  *replies = 0;
  auto add = [&](std::initializer_list<std::string_view> args) {
    protocol::AppendMultibulkHeader(&out, args.size());
    for (std::string_view a : args) protocol::AppendBulkArgument(&out, a);
    ++*replies;
  };
  // Logged in first: the leader refuses HELLO to a client that must still authenticate.
  if (!login.empty()) {
    out += login;
    ++*replies;
  }
  if (proto == 3) add({"HELLO", "3"});
  if (!name.empty()) add({"CLIENT", "SETNAME", name});
  if (db != 0) {
    const std::string index = std::to_string(db);
    add({"SELECT", index});
  }
  return out;
}

}  // namespace latch

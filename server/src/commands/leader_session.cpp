#include "commands/leader_session.h"

#include "catalogue/command_catalogue.h"

namespace latch {

bool RunsOnLeader(const CommandCatalogue& catalogue, std::span<const std::string_view> args) {
  const CommandSpec* spec = catalogue.Find(args[0]);
  if (spec == nullptr) return false;
  // Groups whose every member belongs to the session on the leader, containers included.
  if (spec->group == "transactions" || spec->group == "scripting" || spec->group == "pubsub") {
    return true;
  }
  if (spec->IsContainer() && args.size() >= 2) {  // OBJECT ENCODING, MEMORY USAGE...
    const CommandSpec* sub = spec->FindSubcommand(args[1]);
    if (sub == nullptr) return false;
    spec = sub;
  }
  return (spec->flags & (kCmdWrite | kCmdReadonly | kCmdPubSub)) != 0;
}

}  // namespace latch

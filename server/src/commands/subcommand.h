#pragma once
// The one builder for a container's subcommand specs (CLIENT KILL, ACL SETUSER, ...). A
// container's subcommands share a name prefix, some flags, a COMMAND DOCS group and often a
// version; each family declares those once and builds every subcommand through it.
#include <cstdint>
#include <string>
#include <string_view>

#include "commands/command_table.h"

namespace latch {

struct SubcommandFamily {
  std::string_view container;   // "client": the subcommand "kill" is named "client|kill"
  std::uint32_t flags = 0;      // added to every subcommand's own flags
  std::string_view group;       // COMMAND DOCS group
  std::string_view since = {};  // COMMAND DOCS version, when a subcommand names none

  CommandSpec operator()(std::string_view name, int arity, std::uint32_t own_flags,
                         CommandHandler handler, std::string_view summary,
                         std::string_view own_since = {}) const {
    std::string full(container);
    full += '|';
    full += name;
    return CommandSpec{.name = std::move(full),
                       .arity = arity,
                       .flags = flags | own_flags,
                       .handler = handler,
                       .group = group,
                       .summary = summary,
                       .since = own_since.empty() ? since : own_since};
  }
  // A subcommand with the family's flags only.
  CommandSpec operator()(std::string_view name, int arity, CommandHandler handler,
                         std::string_view summary, std::string_view own_since = {}) const {
    return (*this)(name, arity, 0, handler, summary, own_since);
  }
};

}  // namespace latch

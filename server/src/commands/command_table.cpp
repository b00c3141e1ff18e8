#include "commands/command_table.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "commands/errors.h"

namespace latch {
namespace {

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

bool ArityOk(int arity, std::size_t argc) {
  if (arity > 0) return argc == static_cast<std::size_t>(arity);
  return argc >= static_cast<std::size_t>(-arity);
}

// Redis quotes each argument up to a total of 128 characters.
std::string UnknownCommandError(std::span<const std::string_view> args) {
  std::string msg = "ERR unknown command '";
  msg.append(args[0].substr(0, 128));
  msg.append("', with args beginning with: ");
  std::string list;
  for (std::size_t i = 1; i < args.size() && list.size() < 128; ++i) {
    std::size_t room = 128 - list.size();
    list.push_back('\'');
    list.append(args[i].substr(0, room));
    list.append("' ");
  }
  msg.append(list);
  return msg;
}

}  // namespace

std::string_view CommandSpec::short_name() const {
  std::string_view n = name;
  auto bar = n.find('|');
  return bar == std::string_view::npos ? n : n.substr(bar + 1);
}

const CommandSpec* CommandSpec::FindSubcommand(std::string_view sub) const {
  for (const auto& s : subcommands) {
    if (EqualsNoCase(sub, s.short_name())) return &s;
  }
  return nullptr;
}

CommandTable::CommandTable() {
  RegisterConnectionCommands(*this);
  RegisterStringCommands(*this);
  RegisterKeyCommands(*this);
  RegisterExpireCommands(*this);
  RegisterServerCommands(*this);
  RegisterIntrospectionCommands(*this);
}

void CommandTable::Add(CommandSpec spec) {
  index_[spec.name] = specs_.size();
  specs_.push_back(std::move(spec));
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  char buf[64];
  if (name.size() > sizeof(buf)) return nullptr;
  for (std::size_t i = 0; i < name.size(); ++i) {
    buf[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  }
  auto it = index_.find(std::string_view(buf, name.size()));
  return it == index_.end() ? nullptr : &specs_[it->second];
}

const CommandSpec* CommandTable::Dispatch(CommandContext& ctx) const {
  const CommandSpec* spec = Find(ctx.args[0]);
  if (spec == nullptr) {
    ctx.out.Error(UnknownCommandError(ctx.args));
    return nullptr;
  }
  if (spec->IsContainer() && ctx.argc() >= 2) {
    const CommandSpec* sub = spec->FindSubcommand(ctx.args[1]);
    if (sub == nullptr) {
      std::string upper(ctx.args[0]);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      std::string msg = "ERR unknown subcommand '";
      msg.append(ctx.args[1].substr(0, 128));
      msg.append("'. Try ");
      msg.append(upper);
      msg.append(" HELP.");
      ctx.out.Error(msg);
      return nullptr;
    }
    spec = sub;
  }
  if (!ArityOk(spec->arity, ctx.argc())) {
    ctx.out.Error("ERR wrong number of arguments for '" + spec->name + "' command");
    return nullptr;
  }
  if (!ctx.session.authenticated && !(spec->flags & kCmdNoAuth)) {
    ctx.out.Error(errors::kNoAuth);
    return nullptr;
  }
  if (spec->handler == nullptr) {
    ctx.out.Error("ERR wrong number of arguments for '" + spec->name + "' command");
    return nullptr;
  }
  ctx.session.info->last_cmd.store(&spec->name, std::memory_order_relaxed);
  spec->handler(ctx);
  return spec;
}

}  // namespace latch

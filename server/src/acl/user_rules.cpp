// ACL SETUSER's rule language (Redis 7.0's ACLSetUser/ACLSetSelector), one rule at a time.
#include <algorithm>
#include <cctype>

#include "acl/sha256.h"
#include "acl/user.h"
#include "catalogue/command_catalogue.h"
#include "latch/protocol/case_fold.h"

namespace latch::acl {
namespace {

constexpr std::string_view kSyntaxError = "Syntax error";
constexpr std::string_view kUnknownCommand = "Unknown command or category name in ACL";
constexpr std::string_view kKeyAfterAll =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "
    "have any effect. Try 'resetkeys' to start with an empty list of patterns";
constexpr std::string_view kChannelAfterAll =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not "
    "have any effect. Try 'resetchannels' to start with an empty list of channels";
constexpr std::string_view kNoSuchPassword =
    "The password you are trying to remove from the user does not exist";
constexpr std::string_view kBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
    "characters";
constexpr std::string_view kSubcommandFirstArg =
    "Allowing first-arg of a subcommand is not supported";
// latchd's own refusals (documented in the README's Security section).
constexpr std::string_view kNoFirstArg =
    "Allowing first-arg of a command is not supported by latchd; use a subcommand or the "
    "whole command";
constexpr std::string_view kNoSelectors =
    "Selectors are not supported by latchd; set the rules on the user itself";

bool Is(std::string_view rule, std::string_view lower) { return EqualsNoCase(rule, lower); }

bool HasSpaces(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

bool ValidHash(std::string_view h) {
  return h.size() == 64 && std::all_of(h.begin(), h.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

void SetBit(User& u, std::uint32_t id, bool allow) {
  if (u.allowed.size() <= id / 64) u.allowed.resize(id / 64 + 1, 0);
  const std::uint64_t bit = std::uint64_t{1} << (id % 64);
  if (allow) {
    u.allowed[id / 64] |= bit;
  } else {
    u.allowed[id / 64] &= ~bit;
    u.all_commands = false;
  }
}

// A command and, for a container, all its subcommands (Redis's ACLChangeSelectorPerm).
void ChangePerm(User& u, const CommandIndex::Entry& e, bool allow) {
  SetBit(u, e.id, allow);
  for (std::uint32_t sub : e.subs) SetBit(u, sub, allow);
}

void SetAllCommands(User& u, const CommandIndex& idx, bool allow) {
  u.allowed.assign((idx.size() + 63) / 64, allow ? ~std::uint64_t{0} : 0);
  u.all_commands = allow;
  u.future_commands = allow;
}

std::optional<std::string_view> AddKeyPattern(User& u, std::string_view rule) {
  if (u.all_keys) return kKeyAfterAll;
  std::uint8_t perms = 0;
  std::size_t offset = 1;
  if (rule[0] == '%') {
    for (; offset < rule.size(); ++offset) {
      const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(rule[offset])));
      if (c == 'R' && !(perms & kKeyRead)) {
        perms |= kKeyRead;
      } else if (c == 'W' && !(perms & kKeyWrite)) {
        perms |= kKeyWrite;
      } else if (rule[offset] == '~') {
        ++offset;
        break;
      } else {
        return kSyntaxError;
      }
    }
  } else {
    perms = kKeyAll;
  }
  std::string_view pattern = rule.substr(std::min(offset, rule.size()));
  if (HasSpaces(pattern)) return kSyntaxError;
  auto it = std::find_if(u.keys.begin(), u.keys.end(),
                         [&](const KeyPattern& k) { return k.pattern == pattern; });
  if (it == u.keys.end()) {
    u.keys.push_back(KeyPattern{std::string(pattern), perms});
  } else {
    it->perms |= perms;
  }
  return std::nullopt;
}

std::optional<std::string_view> AddChannel(User& u, std::string_view pattern) {
  if (u.all_channels) return kChannelAfterAll;
  if (HasSpaces(pattern)) return kSyntaxError;
  if (std::find(u.channels.begin(), u.channels.end(), pattern) == u.channels.end()) {
    u.channels.emplace_back(pattern);
  }
  return std::nullopt;
}

// +name, +container|sub (Redis also takes +command|first-arg: latchd does not).
std::optional<std::string_view> AllowCommand(User& u, std::string_view name,
                                             const CommandIndex& idx) {
  const auto bar = name.rfind('|');
  if (bar == std::string_view::npos) {
    const CommandIndex::Entry* e = idx.ByName(name);
    if (e == nullptr) return kUnknownCommand;
    ChangePerm(u, *e, true);
    return std::nullopt;
  }
  const CommandIndex::Entry* parent = idx.ByName(name.substr(0, bar));
  if (parent == nullptr) return kUnknownCommand;
  if (parent->spec->name.find('|') != std::string::npos) return kSubcommandFirstArg;
  if (bar + 1 == name.size()) return kSyntaxError;
  if (parent->subs.empty()) return kNoFirstArg;
  const CommandIndex::Entry* sub = idx.ByName(name);
  if (sub == nullptr) return kUnknownCommand;
  ChangePerm(u, *sub, true);
  return std::nullopt;
}

// The rules Redis calls selector rules: commands, keys and channels.
std::optional<std::string_view> ApplySelectorRule(User& u, std::string_view rule,
                                                  const CommandIndex& idx) {
  if (Is(rule, "allkeys") || Is(rule, "~*")) {
    u.all_keys = true;
    u.keys.clear();
  } else if (Is(rule, "resetkeys")) {
    u.all_keys = false;
    u.keys.clear();
  } else if (Is(rule, "allchannels") || Is(rule, "&*")) {
    u.all_channels = true;
    u.channels.clear();
  } else if (Is(rule, "resetchannels")) {
    u.all_channels = false;
    u.channels.clear();
  } else if (Is(rule, "allcommands") || Is(rule, "+@all")) {
    SetAllCommands(u, idx, true);
  } else if (Is(rule, "nocommands") || Is(rule, "-@all")) {
    SetAllCommands(u, idx, false);
  } else if (rule[0] == '~' || rule[0] == '%') {
    return AddKeyPattern(u, rule);
  } else if (rule[0] == '&') {
    return AddChannel(u, rule.substr(1));
  } else if (rule.size() >= 2 && (rule[0] == '+' || rule[0] == '-') && rule[1] == '@') {
    const std::uint32_t cat = CategoryByName(rule.substr(2));
    if (cat == 0) return kUnknownCommand;
    for (const auto& e : idx.entries()) {
      if (e.categories & cat) ChangePerm(u, e, rule[0] == '+');
    }
  } else if (rule[0] == '+') {
    return AllowCommand(u, rule.substr(1), idx);
  } else if (rule[0] == '-') {
    const CommandIndex::Entry* e = idx.ByName(rule.substr(1));
    if (e == nullptr) return kUnknownCommand;
    ChangePerm(u, *e, false);
  } else {
    return kSyntaxError;
  }
  return std::nullopt;
}

std::optional<std::string_view> ApplyPasswordRule(User& u, std::string_view rule) {
  const bool add = rule[0] == '>' || rule[0] == '#';
  const bool hashed = rule[0] == '#' || rule[0] == '!';
  std::string digest;
  if (hashed) {
    if (!ValidHash(rule.substr(1))) return kBadHash;
    digest = rule.substr(1);
  } else {
    digest = Sha256Hex(rule.substr(1));
  }
  auto it = std::find(u.passwords.begin(), u.passwords.end(), digest);
  if (add) {
    if (it == u.passwords.end()) u.passwords.push_back(std::move(digest));
    u.nopass = false;
  } else {
    if (it == u.passwords.end()) return kNoSuchPassword;
    u.passwords.erase(it);
  }
  return std::nullopt;
}

}  // namespace

User NewUser(std::string name, const CommandIndex& idx) {
  User u;
  u.name = std::move(name);
  u.allowed.assign((idx.size() + 63) / 64, 0);
  return u;
}

std::optional<std::string_view> ApplyRule(User& u, std::string_view rule, const CommandIndex& idx) {
  std::optional<std::string_view> error;
  if (rule.empty()) {
    return std::nullopt;  // Redis: an empty rule does nothing
  } else if (Is(rule, "on") || Is(rule, "off")) {
    u.enabled = Is(rule, "on");
  } else if (Is(rule, "skip-sanitize-payload") || Is(rule, "sanitize-payload")) {
    u.sanitize = Is(rule, "sanitize-payload") ? User::Sanitize::kSanitize : User::Sanitize::kSkip;
  } else if (Is(rule, "nopass") || Is(rule, "resetpass")) {
    u.nopass = Is(rule, "nopass");
    u.passwords.clear();
  } else if (rule[0] == '>' || rule[0] == '#' || rule[0] == '<' || rule[0] == '!') {
    error = ApplyPasswordRule(u, rule);
  } else if (rule[0] == '(' && rule.back() == ')') {
    error = kNoSelectors;
  } else if (Is(rule, "clearselectors")) {
    // No selectors exist to clear.
  } else if (Is(rule, "reset")) {
    u.nopass = false;
    u.passwords.clear();
    u.all_keys = false;
    u.keys.clear();
    u.all_channels = false;  // acl-pubsub-default is resetchannels, as in Redis 7
    u.channels.clear();
    u.enabled = false;
    u.sanitize = User::Sanitize::kSanitize;
    SetAllCommands(u, idx, false);
  } else {
    error = ApplySelectorRule(u, rule, idx);
  }
  u.Refresh();
  return error;
}

bool PasswordMatches(const User& u, std::string_view pass) {
  const std::string digest = Sha256Hex(pass);
  bool found = false;
  for (const std::string& want : u.passwords) {
    unsigned diff = 0;
    for (std::size_t i = 0; i < want.size() && i < digest.size(); ++i) {
      diff |= static_cast<unsigned>(want[i] ^ digest[i]);
    }
    found |= diff == 0;
  }
  return found;
}

}  // namespace latch::acl

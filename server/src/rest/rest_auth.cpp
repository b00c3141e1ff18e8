#include "rest/rest_auth.h"

#include <mutex>
#include <optional>
#include <string>

#include "acl/registry.h"
#include "acl/user.h"
#include "commands/arg_parse.h"
#include "commands/client_list.h"
#include "rest/url_args.h"
#include "server_state.h"

namespace latch::rest {
namespace {

// Compares every byte whatever the first mismatch, so the time taken tells nothing.
bool SameToken(std::string_view want, std::string_view given) {
  unsigned diff = want.size() != given.size();
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff |= static_cast<unsigned>(want[i]) ^
            static_cast<unsigned>(i < given.size() ? given[i] : ~want[i]);
  }
  return diff == 0;
}

// Standard base64 (RFC 4648) with optional padding; nullopt when malformed.
std::optional<std::string> DecodeBase64(std::string_view in) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else
      return std::nullopt;
    bits = (bits << 6) | static_cast<unsigned>(v);
    if ((count += 6) >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  if (count >= 6) return std::nullopt;  // one stray character
  return out;
}

// What the request presents. A scheme other than Bearer/Basic, or a Basic value that does
// not decode to user:password, is a credential that matches nobody.
struct Credential {
  enum class Kind { kNone, kToken, kUserPassword, kUnusable } kind = Kind::kNone;
  std::string token;           // kToken
  std::string user, password;  // kUserPassword
};

bool HasScheme(std::string_view authorization, std::string_view scheme, std::string_view* rest) {
  if (authorization.size() <= scheme.size() ||
      !EqualsNoCase(authorization.substr(0, scheme.size()), scheme) ||
      authorization[scheme.size()] != ' ') {
    return false;
  }
  *rest = authorization.substr(scheme.size() + 1);
  while (!rest->empty() && rest->front() == ' ') rest->remove_prefix(1);
  return true;
}

Credential ParseCredential(std::string_view authorization, std::string_view target) {
  Credential c;
  std::string_view value;
  if (authorization.empty()) {
    if (std::optional<std::string> t = QueryToken(SplitTarget(target).query)) {
      c.kind = Credential::Kind::kToken;
      c.token = std::move(*t);
    }
  } else if (HasScheme(authorization, "bearer", &value)) {
    c.kind = Credential::Kind::kToken;
    c.token = std::string(value);
  } else if (std::optional<std::string> pair; HasScheme(authorization, "basic", &value) &&
                                              (pair = DecodeBase64(value)) &&
                                              pair->find(':') != std::string::npos) {
    // RFC 7617: the user-id ends at the first colon.
    const std::size_t colon = pair->find(':');
    c.kind = Credential::Kind::kUserPassword;
    c.user = pair->substr(0, colon);
    c.password = pair->substr(colon + 1);
  } else {
    c.kind = Credential::Kind::kUnusable;
  }
  return c;
}

class Resolver {
 public:
  Resolver(ServerState& state, bool token_set) : acl_(*state.acl), token_set_(token_set) {}

  // AUTH <name> <password>, except that nopass counts only while no rest-token is set.
  std::shared_ptr<const acl::User> Login(std::string_view name, std::string_view password) {
    std::shared_ptr<const acl::User> u = acl_.Find(name);
    if (u == nullptr) return nullptr;
    named_ = u->name;
    if (!u->enabled) return nullptr;
    if ((u->nopass && !token_set_) || acl::PasswordMatches(*u, password)) return u;
    return nullptr;
  }
  // The user the failed credential named (for ACL LOG), "default" when it named none.
  const std::string& named() const { return named_; }

 private:
  acl::Registry& acl_;
  bool token_set_;
  std::string named_ = "default";
};

void RecordFailure(ServerState& state, const ClientInfo& info, const std::string& user) {
  acl::Registry& reg = *state.acl;
  reg.denied_auth.fetch_add(1, std::memory_order_relaxed);
  const TimeSnapshot now = state.clock->Now();
  std::string line;
  {
    std::lock_guard lock(state.clients.mu);
    AppendClientLine(info, now.mono_ms, &line);
  }
  if (!line.empty() && line.back() == '\n') line.pop_back();
  reg.log().Add(acl::LogEntry{1, "auth", "toplevel", "AUTH", user, 0, std::move(line)},
                now.wall_ms);
}

}  // namespace

std::shared_ptr<const acl::User> AuthenticateRequest(ServerState& state, const ClientInfo& info,
                                                     std::string_view authorization,
                                                     std::string_view target) {
  std::string rest_token, rest_user;
  {
    std::lock_guard lock(state.options_mu);
    rest_token = state.options.rest_token;
    rest_user = state.options.rest_user;
  }
  const Credential c = ParseCredential(authorization, target);
  Resolver resolve(state, !rest_token.empty());
  std::shared_ptr<const acl::User> u;
  if (c.kind == Credential::Kind::kToken) {
    if (!rest_token.empty() && SameToken(rest_token, c.token)) {
      u = state.acl->Find(rest_user);
      return u != nullptr && u->enabled ? u : nullptr;  // the token names no other user
    }
    // <user>:<password> when <user> exists and the password is its; else the default
    // user's password (which may itself hold a colon).
    if (const std::size_t colon = c.token.find(':'); colon != std::string::npos) {
      u = resolve.Login(std::string_view(c.token).substr(0, colon),
                        std::string_view(c.token).substr(colon + 1));
    }
    if (u == nullptr) u = resolve.Login("default", c.token);
  } else if (c.kind == Credential::Kind::kUserPassword) {
    u = resolve.Login(c.user, c.password);
  }
  if (u != nullptr) return u;
  if (c.kind != Credential::Kind::kNone) RecordFailure(state, info, resolve.named());
  // No usable credential: the default user when it needs none, as a RESP client that
  // never sent AUTH, unless a rest-token asks for one.
  if (rest_token.empty()) {
    u = state.acl->Find("default");
    if (u != nullptr && u->enabled && u->nopass) return u;
  }
  return nullptr;
}

}  // namespace latch::rest

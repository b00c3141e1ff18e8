#pragma once
// Who a REST request runs as. Upstash gives each ACL user REST credentials of its own; latchd
// maps a request's credentials onto its ACL users the way AUTH does, afresh at every request
// (nothing is cached on the HTTP connection, and nothing from start-up), so a user turned
// off, deleted or given a new password is refused at its next request:
//   Bearer <rest-token> (when rest-token is set)  -> rest-user (on, existing)
//   Bearer <user>:<password>, Basic <user>:<password> -> AUTH <user> <password>
//   Bearer <password>                              -> AUTH <password> (the default user)
//   ?_token=<token>, with no Authorization header  -> as Bearer <token>
//   none (or none that matches)                    -> default, if it is on and nopass and no
//                                                     rest-token is set (RESP without AUTH)
// With a rest-token set, nopass opens nothing over REST: such a user is reachable only
// through the token. A credential that matches nothing is counted and logged as an AUTH
// failure (INFO acl_access_denied_auth, ACL LOG). Worker thread of the request.
#include <cstdint>
#include <memory>
#include <string_view>

namespace latch {
struct ServerState;
struct ClientInfo;
}  // namespace latch

namespace latch::acl {
struct User;
}  // namespace latch::acl

namespace latch::rest {

// The user the request runs as (its snapshot now), or null: answer 401.
std::shared_ptr<const acl::User> AuthenticateRequest(ServerState& state, const ClientInfo& info,
                                                     std::string_view authorization,
                                                     std::string_view target);

}  // namespace latch::rest

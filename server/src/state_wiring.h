#pragma once
// The composition of ServerState with the parts of the layers above it. server_state.h sits
// just above the services and includes nothing higher, so the ACL registry, CLIENT PAUSE's
// parked clients and the command table's hooks (fault injection, the script engine) are
// built and set here, in the server layer.
namespace latch {

struct ServerState;
class CommandTable;

// Once, after `state` is constructed and before any thread uses it or `table`: builds the
// ACL registry (requirepass applied) and CLIENT PAUSE's parked-client list, registers fault
// injection's interceptor and the script engine on `table`, and points `state` at `table`.
// The server calls it; so do in-process tests that dispatch through a ServerState of their
// own.
void WireUpperParts(ServerState& state, CommandTable& table);

}  // namespace latch

#include "state_wiring.h"

#include <memory>

#include "acl/acl_file.h"
#include "acl/registry.h"
#include "commands/client_pause.h"
#include "commands/command_table.h"
#include "scripting/script_engine.h"
#include "server_state.h"
#include "testing/fault_hook.h"

namespace latch {

void WireUpperParts(ServerState& state, CommandTable& table) {
  // Given requirepass before the catalogue is set, as ServerState's constructor once did:
  // the default user is made with it on first use after that (Registry::EnsureDefault).
  state.acl = std::make_shared<acl::Registry>(state.catalogue);
  state.acl_denials = state.acl.get();
  acl::ApplyRequirepass(state);
  state.client_pause = std::make_shared<ClientPause>();
  table.SetInterceptor(&testing::InterceptCommand);  // TEST.FAULT (test mode)
  table.SetScriptHost(
      [](ServerState& server) -> ScriptHost& { return scripting::EngineFor(server); });
  state.commands = &table;
  state.catalogue = &table;
}

}  // namespace latch

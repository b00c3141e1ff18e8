#pragma once
// The journal's few entry points for code outside journal/ (dispatch, lock commands, the
// connection), kept in one light header so that those files change by a line or two each.
#include <cstdint>
#include <functional>
#include <string_view>

#include "server_state.h"

namespace latch {
class CommandTable;
}  // namespace latch

namespace latch::journal {

// Redis's reply to commands while the dataset is loading.
inline constexpr std::string_view kLoadingError = "LOADING Redis is loading the dataset in memory";
// Commands flagged kCmdLoading (Redis's "loading" flag) are let through meanwhile.

// appendfsync always, for the connection: the highest journal record a reply depends on is
// ThisThreadLastSeq() (journal.h) after a command appended, or AppendedSeq() when a record was
// appended by another thread for this client (a lock handed to a parked waiter).
std::uint64_t AppendedSeq(const ServerState& s);
// True when the replies must wait for record `seq` to be on disk; `resume` then runs on the
// journal thread once it is (the caller posts back to its own io_context).
bool HoldUntilDurable(const ServerState& s, std::uint64_t seq, std::function<void()> resume);

// BGREWRITEAOF.
void RegisterPersistenceCommands(CommandTable& t);

}  // namespace latch::journal

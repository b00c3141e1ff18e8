#pragma once
// Parsing of the tls-* directives that need more than a string, number or yes/no (the table
// is in config_directives.cpp). The files and settings are checked when the TLS context is
// built (net/tls_context.cpp), as Redis does, not when the value is read.
#include <optional>
#include <string>
#include <string_view>

#include "latch/options.h"

namespace latch::config {

// tls-auth-clients: yes | no | optional, any case, stored in lower case.
std::optional<std::string> SetTlsAuthClients(Options& o, std::string_view value);

}  // namespace latch::config

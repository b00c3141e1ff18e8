#include "config/tls_directives.h"

#include <array>
#include <variant>

#include "config/config_values.h"

namespace latch::config {

std::optional<std::string> SetTlsAuthClients(Options& o, std::string_view value) {
  // Redis lists them in this order in its reason.
  static constexpr std::array<std::string_view, 3> kChoices = {"no", "yes", "optional"};
  const Parsed<int> parsed = ParseEnum(value, {kChoices[0], kChoices[1], kChoices[2]});
  if (const auto* reason = std::get_if<std::string>(&parsed)) return *reason;
  o.tls_auth_clients = std::string(kChoices[static_cast<std::size_t>(std::get<int>(parsed))]);
  return std::nullopt;
}

}  // namespace latch::config

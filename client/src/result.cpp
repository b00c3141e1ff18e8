#include "latch/result.h"

namespace latch {
namespace {

class ClientCategory : public std::error_category {
 public:
  const char* name() const noexcept override { return "latch.client"; }
  std::string message(int ev) const override {
    switch (static_cast<Errc>(ev)) {
      case Errc::kTimeout:
        return "timed out";
      case Errc::kConnectionLost:
        return "connection lost";
      case Errc::kConnectFailed:
        return "connect failed";
      case Errc::kHandshakeFailed:
        return "handshake failed";
      case Errc::kProtocolError:
        return "protocol error";
      case Errc::kClientClosed:
        return "client closed";
      case Errc::kInvalidArgument:
        return "invalid argument";
      case Errc::kUnexpectedReply:
        return "unexpected reply";
      case Errc::kServerError:
        return "server error";
      case Errc::kUnsupported:
        return "unsupported by the server";
      case Errc::kNotAcquired:
        return "lock not acquired";
      case Errc::kLeaseLost:
        return "lease lost";
    }
    return "unknown error";
  }
};

}  // namespace

const std::error_category& client_category() {
  static const ClientCategory category;
  return category;
}

std::string Error::ToString() const {
  std::string s = code.message();
  if (!message.empty()) s += ": " + message;
  return s;
}

}  // namespace latch

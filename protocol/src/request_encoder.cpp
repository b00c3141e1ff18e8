// Requests as RESP multibulk, as clients send them.
#include "latch/protocol/request_encoder.h"

#include <string>

namespace latch::protocol {

void AppendMultibulkHeader(std::string* out, std::size_t argc) {
  out->push_back('*');
  out->append(std::to_string(argc));
  out->append("\r\n");
}

void AppendBulkArgument(std::string* out, std::string_view arg) {
  out->push_back('$');
  out->append(std::to_string(arg.size()));
  out->append("\r\n");
  out->append(arg);
  out->append("\r\n");
}

}  // namespace latch::protocol

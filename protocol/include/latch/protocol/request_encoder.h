#pragma once
// Client side of RESP: encoding a request.
#include <cstddef>
#include <string>
#include <string_view>

namespace latch::protocol {

// Appends a request as a RESP multibulk ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n").
void AppendMultibulkHeader(std::string* out, std::size_t argc);
void AppendBulkArgument(std::string* out, std::string_view arg);

}  // namespace latch::protocol

#pragma once
// An embedded latchd with the REST endpoint on (rest-port on a free port, rest-token "tok"),
// and one-call helpers for the REST wire tests.
#include <string>
#include <vector>

#include "support/embedded_server.h"
#include "support/free_port.h"
#include "support/http_connection.h"

namespace latch::test {

inline const std::string kRestToken = "tok";
inline const std::string kRestAuth = "Authorization: Bearer tok";

inline Options RestOptions(Options o = EmbeddedServer::DefaultOptions(),
                           std::string token = kRestToken) {
  o.rest_port = FreePort();
  o.rest_token = std::move(token);
  return o;
}

struct RestServer {
  explicit RestServer(Options o = RestOptions()) : server(std::move(o)) {}
  int port() { return server.server().rest_port(); }
  int resp_port() { return server.port(); }

  // One request on a fresh connection, authorized unless headers say otherwise.
  HttpResponse Call(const std::string& method, const std::string& target,
                    const std::string& body = "", std::vector<std::string> headers = {kRestAuth}) {
    HttpConnection c(port());
    return c.Request(method, target, body, headers);
  }
  HttpResponse Post(const std::string& target, const std::string& body,
                    std::vector<std::string> headers = {kRestAuth}) {
    return Call("POST", target, body, std::move(headers));
  }
  HttpResponse Get(const std::string& target, std::vector<std::string> headers = {kRestAuth}) {
    return Call("GET", target, "", std::move(headers));
  }

  EmbeddedServer server;
};

}  // namespace latch::test

#pragma once
// An embedded latchd with the REST endpoint on (rest-port on a free port, rest-token "tok"),
// and one-call helpers for the REST wire tests.
#include <memory>
#include <string>
#include <string_view>
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
  explicit RestServer(Options o = RestOptions()) : owned(Start(std::move(o))), server(*owned) {}

  // FreePort() races with other processes for the REST port: another free port, a few times.
  static std::unique_ptr<EmbeddedServer> Start(Options o) {
    for (int attempt = 1;; ++attempt) {
      try {
        return std::make_unique<EmbeddedServer>(o);
      } catch (const std::exception& e) {
        if (attempt == 5 ||
            std::string_view(e.what()).find("REST listening socket") == std::string_view::npos) {
          throw;
        }
        o.rest_port = FreePort();
      }
    }
  }
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

  std::unique_ptr<EmbeddedServer> owned;
  EmbeddedServer& server;
};

}  // namespace latch::test

// TLS on the tls-port with real handshakes: redis-cli --tls and redis-py (ssl=True) against
// the embedded server, the plain port beside it, client certificates required / optional,
// a wrong CA, clients that never handshake or send plain RESP, bad files at start-up, and
// CONFIG SET reloading the certificate. Certificates are made at run time (openssl CLI).
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "support/embedded_server.h"
#include "support/free_port.h"
#include "support/raw_connection.h"
#include "support/server_process.h"
#include "support/tcp_socket.h"
#include "support/tls_test_certs.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

Options TlsOptions(const TlsTestCertificates& certs) {
  Options o = EmbeddedServer::DefaultOptions();
  o.tls_port = -1;  // a free port, beside the plain one
  o.tls_cert_file = certs.Path("server.crt");
  o.tls_key_file = certs.Path("server.key");
  o.tls_ca_cert_file = certs.Path("ca.crt");
  o.tls_handshake_timeout = 500;
  return o;
}

class TlsWireTest : public ::testing::Test {
 protected:
  // One set of certificates for the suite: making them costs a second or two.
  static void SetUpTestSuite() { shared_certs_ = new TlsTestCertificates(); }
  static void TearDownTestSuite() {
    delete shared_certs_;
    shared_certs_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(certs_.ok()) << "openssl could not make certificates"; }

  // redis-cli over TLS with the test CA; `extra` e.g. the client certificate options.
  std::pair<std::string, int> Cli(int port, const std::string& extra, const std::string& args) {
    return RunShellCommand("redis-cli -p " + std::to_string(port) + " --tls " + extra + " " + args);
  }
  std::string WithCa(const std::string& ca = "ca.crt") { return "--cacert " + certs_.Path(ca); }
  std::string WithCert() {
    return WithCa() + " --cert " + certs_.Path("client.crt") + " --key " +
           certs_.Path("client.key");
  }

  static inline TlsTestCertificates* shared_certs_ = nullptr;
  const TlsTestCertificates& certs_ = *shared_certs_;
};

TEST_F(TlsWireTest, RedisCliOverTlsWhileThePlainPortServesToo) {
  EmbeddedServer server(TlsOptions(certs_));
  const int tls = server.server().tls_port();
  ASSERT_GT(tls, 0);
  ASSERT_NE(tls, server.port());
  EXPECT_EQ(Cli(tls, WithCert(), "PING").first, "PONG\n");
  EXPECT_EQ(Cli(tls, WithCert(), "SET lock:a owner1 PX 60000").first, "OK\n");
  EXPECT_EQ(Cli(tls, WithCert(), "GET lock:a").first, "owner1\n");
  RawConnection plain(server.port());
  EXPECT_EQ(plain.Command("GET", "lock:a"), "$6\r\nowner1\r\n");
  EXPECT_EQ(plain.Command("CONFIG", "GET", "tls-auth-clients"),
            "*2\r\n$16\r\ntls-auth-clients\r\n$3\r\nyes\r\n");
}

TEST_F(TlsWireTest, RedisPyTakesAndReleasesALockOverTls) {
  EmbeddedServer server(TlsOptions(certs_));
  const std::string script = std::string(LATCH_SOURCE_DIR) + "/tests/wire/tls_redis_py_lock.py";
  const auto [out, status] = RunShellCommand(
      "/usr/bin/python3 " + script + " " + std::to_string(server.server().tls_port()) + " " +
      certs_.Path("ca.crt") + " " + certs_.Path("client.crt") + " " + certs_.Path("client.key"));
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("acquired released"), std::string::npos) << out;
}

TEST_F(TlsWireTest, ClientCertificatesRequiredOptionalOrNot) {
  EmbeddedServer server(TlsOptions(certs_));
  const int tls = server.server().tls_port();
  // yes (the default): no certificate, no session.
  EXPECT_NE(Cli(tls, WithCa(), "PING").first, "PONG\n");
  // A certificate from another CA is refused too.
  EXPECT_NE(Cli(tls,
                WithCa() + " --cert " + certs_.Path("server2.crt") + " --key " +
                    certs_.Path("server2.key"),
                "PING")
                .first,
            "PONG\n");
  RawConnection plain(server.port());
  ASSERT_EQ(plain.Command("CONFIG", "SET", "tls-auth-clients", "optional"), "+OK\r\n");
  EXPECT_EQ(Cli(tls, WithCa(), "PING").first, "PONG\n");
  EXPECT_EQ(Cli(tls, WithCert(), "PING").first, "PONG\n");
  // optional still checks a certificate that is sent.
  EXPECT_NE(Cli(tls,
                WithCa() + " --cert " + certs_.Path("server2.crt") + " --key " +
                    certs_.Path("server2.key"),
                "PING")
                .first,
            "PONG\n");
  ASSERT_EQ(plain.Command("CONFIG", "SET", "tls-auth-clients", "no"), "+OK\r\n");
  EXPECT_EQ(Cli(tls, WithCa(), "PING").first, "PONG\n");
}

TEST_F(TlsWireTest, AClientRefusesAServerCertificateOfAnotherCa) {
  EmbeddedServer server(TlsOptions(certs_));
  const auto [out, status] =
      Cli(server.server().tls_port(),
          "--cacert " + certs_.Path("ca2.crt") + " --cert " + certs_.Path("client.crt") +
              " --key " + certs_.Path("client.key"),
          "PING");
  EXPECT_NE(out.find("certificate verify failed"), std::string::npos) << out;
}

// A socket that connects and says nothing is closed after tls-handshake-timeout; one that
// speaks plain RESP to the TLS port is dropped at once; neither delays the others.
TEST_F(TlsWireTest, SilentAndGarbageClientsDoNotDisturbOthers) {
  EmbeddedServer server(TlsOptions(certs_));
  const int tls = server.server().tls_port();
  TcpSocket silent(tls);
  ASSERT_TRUE(silent.ok());
  TcpSocket garbage(tls);
  ASSERT_TRUE(garbage.SendAll("*1\r\n$4\r\nPING\r\n"));
  EXPECT_TRUE(garbage.WaitClosed(2000ms));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Cli(tls, WithCert(), "PING").first, "PONG\n");
  RawConnection plain(server.port());
  EXPECT_EQ(plain.Command("PING"), "+PONG\r\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_TRUE(silent.WaitClosed(3000ms)) << "a client that never handshakes keeps its slot";
  // The slots are given back: only the plain client is left, once the server has seen
  // redis-cli's close (it may not have yet when redis-cli has exited).
  std::string list;
  std::size_t clients = 0;
  const bool one_left = Eventually([&] {
    list = plain.Command("CLIENT", "LIST");
    clients = 0;
    for (std::size_t at = list.find("id="); at != std::string::npos;
         at = list.find("id=", at + 1)) {
      ++clients;
    }
    return clients == 1;
  });
  EXPECT_TRUE(one_left) << clients << " clients listed:\n" << list;
}

TEST_F(TlsWireTest, BadFilesStopTheStartWithRedisReasons) {
  auto reason = [&](Options o) -> std::string {
    try {
      EmbeddedServer server(std::move(o));
    } catch (const std::exception& e) {
      return e.what();
    }
    return "started";
  };
  Options o = TlsOptions(certs_);
  o.tls_cert_file = certs_.Path("missing.crt");
  EXPECT_EQ(reason(o),
            "Failed to configure TLS: Failed to load certificate: " + certs_.Path("missing.crt") +
                ": error:80000002:system library::No such file or directory");
  o = TlsOptions(certs_);
  o.tls_key_file = certs_.Path("client.key");  // not the certificate's key
  EXPECT_NE(reason(o).find("Failed to load private key: "), std::string::npos);
  o = TlsOptions(certs_);
  o.tls_ca_cert_file.clear();
  EXPECT_EQ(reason(o),
            "Failed to configure TLS: Either tls-ca-cert-file or tls-ca-cert-dir must be "
            "specified when tls-cluster, tls-replication or tls-auth-clients are enabled!");
  o = TlsOptions(certs_);
  o.tls_protocols = "TLSv1.2 SSLv3";
  EXPECT_NE(reason(o).find("Invalid tls-protocols specified."), std::string::npos);
  o = TlsOptions(certs_);
  o.tls_key_file = certs_.Path("server-enc.key");
  EXPECT_NE(reason(o).find("Failed to load private key"), std::string::npos);
  o.tls_key_file_pass = "secret";
  EXPECT_EQ(reason(o), "started");
}

TEST_F(TlsWireTest, LatchdStopsAtStartUpOnABadCertificateWithRedisLines) {
  LatchdProcess latchd({"--tls-port", std::to_string(FreePort()), "--tls-cert-file",
                        certs_.Path("missing.crt"), "--tls-key-file", certs_.Path("server.key"),
                        "--tls-ca-cert-file", certs_.Path("ca.crt")});
  EXPECT_FALSE(latchd.ok());
  const std::string log = latchd.Log();
  EXPECT_NE(log.find("# Failed to load certificate: " + certs_.Path("missing.crt") +
                     ": error:80000002:system library::No such file or directory"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("# Failed to configure TLS. Check logs for more info."), std::string::npos)
      << log;
  EXPECT_EQ(log.find("Ready to accept connections"), std::string::npos) << log;
}

TEST_F(TlsWireTest, ConfigSetReloadsTheCertificateForNewConnections) {
  Options o = TlsOptions(certs_);
  o.tls_auth_clients = "no";
  EmbeddedServer server(o);
  const int tls = server.server().tls_port();
  RawConnection plain(server.port());
  EXPECT_EQ(plain.Command("CONFIG", "SET", "tls-cert-file", certs_.Path("missing.crt")),
            "-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to "
            "update TLS configuration. Check server logs.\r\n");
  EXPECT_EQ(Cli(tls, WithCa(), "PING").first, "PONG\n");  // the old context stays
  EXPECT_EQ(plain.Command("CONFIG", "SET", "tls-cert-file", certs_.Path("server2.crt"),
                          "tls-key-file", certs_.Path("server2.key")),
            "+OK\r\n");
  EXPECT_EQ(Cli(tls, WithCa("ca2.crt"), "PING").first, "PONG\n");
  EXPECT_NE(Cli(tls, WithCa(), "PING").first, "PONG\n");
}

}  // namespace
}  // namespace latch::test

// latch::Client over TLS (rediss://) against latchd's tls-port, with real handshakes and
// certificates made at run time: the lock API and Redlock, a client certificate for
// tls-auth-clients yes, a server certificate of another CA refused, SNI / name checks.
#ifdef LATCH_CLIENT_TESTS_LATCHD
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "../support/tls_test_certs.h"
#include "latch/lock.h"
#include "latch/redlock.h"
#include "latch/server.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

class TlsClientTest : public ::testing::Test {
 protected:
  // One set of certificates for the suite: making them costs a second or two.
  static void SetUpTestSuite() { shared_certs_ = new TlsTestCertificates(); }
  static void TearDownTestSuite() {
    delete shared_certs_;
    shared_certs_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(certs_.ok()) << "openssl could not make certificates"; }

  // latchd on 127.0.0.1 with a plain and a TLS port, both free ones.
  std::unique_ptr<Server> StartServer(const std::string& cert = "server",
                                      const std::string& auth_clients = "yes") {
    Options o;
    o.bind = "127.0.0.1";
    o.port = 0;
    o.tls_port = -1;
    o.io_threads = 1;
    o.tls_cert_file = certs_.Path(cert + ".crt");
    o.tls_key_file = certs_.Path(cert + ".key");
    o.tls_ca_cert_file = certs_.Path("ca.crt");
    o.tls_auth_clients = auth_clients;
    o.loglevel = "warning";
    auto server = std::make_unique<Server>(o);
    server->start();
    return server;
  }
  ClientOptions TlsClient(const Server& server, bool with_cert = true) {
    auto o = ClientOptions::FromUrl("rediss://127.0.0.1:" + std::to_string(server.tls_port()));
    EXPECT_TRUE(o.ok());
    ClientOptions options = o.value();
    options.tls.ca_file = certs_.Path("ca.crt");
    if (with_cert) {
      options.tls.cert_file = certs_.Path("client.crt");
      options.tls.key_file = certs_.Path("client.key");
    }
    options.connect_timeout = 3000ms;
    return options;
  }

  static inline TlsTestCertificates* shared_certs_ = nullptr;
  const TlsTestCertificates& certs_ = *shared_certs_;
};

TEST(TlsEndpointTest, RedissUrlsAskForTls) {
  auto ep = Endpoint::Parse("rediss://:pw@locks.internal:6390/0");
  ASSERT_TRUE(ep.ok());
  EXPECT_TRUE(ep->tls);
  EXPECT_EQ(ep->port, 6390);
  EXPECT_EQ(ep->ToString(), "rediss://:***@locks.internal:6390");
  EXPECT_FALSE(Endpoint::Parse("redis://h:1")->tls);
  EXPECT_FALSE(Endpoint::Parse("http://h:1").ok());
}

TEST_F(TlsClientTest, LockAcquireAndReleaseOverTls) {
  auto server = StartServer();
  Client client(TlsClient(*server));
  Lock lock(client);
  auto lease = lock.acquire_sync("lock:tls", 10s);
  ASSERT_TRUE(lease.ok()) << lease.error().ToString();
  EXPECT_TRUE(lease->fencing_token.has_value());  // LOCK.ACQUIRE: latchd's own commands
  auto again = lock.acquire_sync("lock:tls", 10s);
  EXPECT_FALSE(again.ok() && again->owner != lease->owner) << "granted twice";
  auto released = lock.release_sync(*lease);
  ASSERT_TRUE(released.ok()) << released.error().ToString();
  EXPECT_EQ(*released, LeaseStatus::kOk);
  auto get = client.command_sync("EXISTS", "lock:tls");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->integer, 0);
}

TEST_F(TlsClientTest, RedlockOverThreeTlsServers) {
  std::vector<std::unique_ptr<Server>> servers;
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<Client*> raw;
  for (int i = 0; i < 3; ++i) {
    servers.push_back(StartServer());
    clients.push_back(std::make_unique<Client>(TlsClient(*servers.back())));
    raw.push_back(clients.back().get());
  }
  Redlock redlock(raw);
  auto lease = redlock.acquire_sync({"lock:red"}, 10s);
  ASSERT_TRUE(lease.ok()) << lease.error().ToString();
  EXPECT_EQ(lease->granted, 3);
  auto released = redlock.release_sync(*lease);
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, 3);
}

TEST_F(TlsClientTest, AServerCertificateOfAnotherCaIsRefused) {
  auto server = StartServer("server2");  // signed by ca2; the client trusts ca only
  Client client(TlsClient(*server));
  auto r = client.command_sync("PING");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("certificate verify failed"), std::string::npos)
      << r.error().ToString();
  // verify off accepts it (for tests against self-made certificates only).
  ClientOptions unchecked = TlsClient(*server);
  unchecked.tls.verify = false;
  Client trusting(unchecked);
  auto pong = trusting.command_sync("PING");
  ASSERT_TRUE(pong.ok()) << pong.error().ToString();
}

TEST_F(TlsClientTest, ClientCertificateAndServerName) {
  auto server = StartServer();
  Client without_cert(TlsClient(*server, /*with_cert=*/false));
  EXPECT_FALSE(without_cert.command_sync("PING").ok()) << "tls-auth-clients yes let it in";
  ClientOptions named = TlsClient(*server);
  named.tls.server_name = "localhost";  // in the certificate: SNI sent, name checked
  Client by_name(named);
  auto pong = by_name.command_sync("PING");
  ASSERT_TRUE(pong.ok()) << pong.error().ToString();
  named.tls.server_name = "locks.example.com";  // not in the certificate
  Client wrong_name(named);
  EXPECT_FALSE(wrong_name.command_sync("PING").ok());
}

TEST_F(TlsClientTest, AMissingCaFileFailsTheConnectWithItsName) {
  auto server = StartServer();
  ClientOptions o = TlsClient(*server);
  o.tls.ca_file = certs_.Path("missing.crt");
  Client client(o);
  auto r = client.command_sync("PING");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("missing.crt"), std::string::npos) << r.error().ToString();
}

}  // namespace
}  // namespace latch::test
#endif  // LATCH_CLIENT_TESTS_LATCHD

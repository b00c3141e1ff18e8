#pragma once
// Certificates for the TLS tests, made at run time by make_tls_certs.sh (beside this header)
// into a fresh temporary directory that is removed afterwards: ca, server (127.0.0.1 and
// localhost), server-enc.key (pass phrase "secret"), client, and ca2 + server2 (another CA).
// Header-only, so the client tests (which do not link latch_test_support) use it too; the
// includer defines LATCH_SOURCE_DIR.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "shell.h"

namespace latch::test {

class TlsTestCertificates {
 public:
  TlsTestCertificates() {
    std::string pattern = (std::filesystem::temp_directory_path() / "latch-tls-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) return;
    dir_ = pattern;
    const std::filesystem::path script =
        std::filesystem::path(LATCH_SOURCE_DIR) / "tests/support/make_tls_certs.sh";
    const std::string command = "bash '" + script.string() + "' '" + dir_.string() + "' 2>&1";
    ok_ = std::system(command.c_str()) == 0;
  }
  ~TlsTestCertificates() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  TlsTestCertificates(const TlsTestCertificates&) = delete;
  TlsTestCertificates& operator=(const TlsTestCertificates&) = delete;

  // False when the openssl CLI failed (scripts/deps.sh installs it).
  bool ok() const { return ok_; }
  // The path of one of the files, e.g. Path("ca.crt").
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
  bool ok_ = false;
};

}  // namespace latch::test

#pragma once
// Certificates for the TLS tests, made at run time by make_tls_certs.sh (beside this header)
// into a fresh temporary directory that is removed afterwards: ca, server (127.0.0.1 and
// localhost), server-enc.key (pass phrase "secret"), client, and ca2 + server2 (another CA).
// Header-only, so the client tests (which do not link latch_test_support) use it too; the
// includer defines LATCH_SOURCE_DIR.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

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

// Runs a shell command under timeout(1) and returns its stdout+stderr and exit status.
inline std::pair<std::string, int> RunShellCommand(const std::string& command, int seconds = 10) {
  std::FILE* pipe =
      ::popen(("timeout " + std::to_string(seconds) + " " + command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {"popen failed", -1};
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

}  // namespace latch::test

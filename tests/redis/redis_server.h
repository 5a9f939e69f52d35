// A real redis-server for tests (the distribution's package, installed by tools/setup.sh): on
// 127.0.0.1, a free port, a temporary directory, no persistence; killed (and restartable on
// the same port) by the test.
#ifndef TESSERA_TESTS_REDIS_REDIS_SERVER_H_
#define TESSERA_TESTS_REDIS_REDIS_SERVER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cache/redis_client.h"

extern char** environ;

namespace tessera::testing {

class RedisServer {
 public:
  /// `password`: the server's requirepass ("" for none).
  explicit RedisServer(std::string password = "") : password_(std::move(password)) {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/redis.", getpid(), ".", ++serial_);
    std::filesystem::create_directories(dir_);
    port_ = FreePort();
    Start();
  }
  ~RedisServer() { Kill(); }

  int port() const { return port_; }
  /// "redis://[:password@]127.0.0.1:<port>" plus `query` ("?timeout_ms=…").
  std::string Url(const std::string& query = "") const {
    return absl::StrCat("redis://", password_.empty() ? "" : absl::StrCat(":", password_, "@"),
                        "127.0.0.1:", port_, query);
  }

  /// Starts it (again, on the same port) and waits until it answers PING.
  void Start() {
    std::vector<std::string> args = {"redis-server", "--port",    std::to_string(port_),
                                     "--bind",       "127.0.0.1", "--dir",
                                     dir_,           "--save",    "",
                                     "--appendonly", "no",        "--daemonize",
                                     "no",           "--logfile", dir_ + "/redis.log"};
    if (!password_.empty()) {
      args.push_back("--requirepass");
      args.push_back(password_);
    }
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (posix_spawnp(&pid_, "redis-server", nullptr, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
      return;
    }
    for (int attempt = 0; attempt < 500; ++attempt) {
      cache::RedisEndpoint endpoint;
      endpoint.host = "127.0.0.1";
      endpoint.port = port_;
      endpoint.password = password_;
      cache::RedisClient probe(endpoint);
      if (probe.Command({"PING"}).ok()) return;
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  /// SIGKILL: the server vanishes mid-whatever.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  bool running() const { return pid_ > 0; }

  /// An administrative connection (CONFIG SET, raw SET, CLIENT PAUSE, …).
  cache::RedisClient Admin() const {
    cache::RedisEndpoint endpoint;
    endpoint.host = "127.0.0.1";
    endpoint.port = port_;
    endpoint.password = password_;
    endpoint.command_timeout = absl::Seconds(10);
    return cache::RedisClient(endpoint);
  }

  /// Runs redis-cli against this server with `args`; its exit status.
  int Cli(const std::string& args) const {
    const std::string command =
        absl::StrCat("redis-cli -h 127.0.0.1 -p ", port_,
                     password_.empty() ? "" : absl::StrCat(" --no-auth-warning -a ", password_),
                     " ", args, " >/dev/null");
    return std::system(command.c_str());
  }

 private:
  static int FreePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    socklen_t length = sizeof(address);
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    close(fd);
    return ntohs(address.sin_port);
  }

  std::string password_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  static inline int serial_ = 0;
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_REDIS_REDIS_SERVER_H_

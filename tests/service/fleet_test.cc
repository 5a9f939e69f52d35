// A fleet sharing a remote tier: processes with separate disk roots ("machines") and one real
// redis-server. Each new key is compiled once fleet-wide; the server dying, a lease holder
// dying, corrupted values and a wrong password never fail a compile.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/redis/redis_server.h"

extern char** environ;

namespace tessera::service {
namespace {

using ::testing::HasSubstr;

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return srcdir != nullptr ? absl::StrCat(srcdir, "/tessera_jit/", path) : path;
}

std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/fleet-", name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// A new kernel per `n`: out = x * n + y, for nvptx (a real, slow-enough compile).
std::string Kernel(const std::string& dir, int n) {
  const std::string path = absl::StrCat(dir, "/kernel", n, ".mlir");
  std::ofstream(path) << "func.func @k" << n
                      << "(%x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {\n"
                         "  tile.map ins(%x, %y : memref<?xf32>, memref<?xf32>) outs(%out : "
                         "memref<?xf32>) {\n"
                         "  ^bb0(%xi: f32, %yi: f32):\n"
                         "    %c = arith.constant "
                      << n
                      << ".0 : f32\n"
                         "    %m = arith.mulf %xi, %c : f32\n"
                         "    %r = arith.addf %m, %yi : f32\n"
                         "    tile.yield %r : f32\n"
                         "  }\n  return\n}\n";
  return path;
}

struct Child {
  pid_t pid = -1;
  std::string out, err;
};

Child Spawn(const std::vector<std::string>& args, const std::string& log) {
  Child child{-1, log + ".out", log + ".err"};
  std::vector<std::string> all = {Runfile("tests/service/service_child")};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : all) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, child.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, child.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  EXPECT_EQ(posix_spawn(&child.pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return child;
}

int Wait(const Child& child) {
  int status = 0;
  waitpid(child.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The "<how> <sha>" lines of a child's output, in order.
std::vector<std::pair<std::string, std::string>> Results(const Child& child) {
  std::vector<std::pair<std::string, std::string>> results;
  for (absl::string_view line : absl::StrSplit(Slurp(child.out), '\n', absl::SkipEmpty())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ');
    if (words.size() == 2) results.emplace_back(words[0], words[1]);
  }
  return results;
}

TEST(FleetTest, EachNewKeyIsCompiledOnceAcrossTheFleetWithIdenticalArtifacts) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  const std::string dir = Scratch("once");
  std::vector<std::string> kernels;
  for (int n = 1; n <= 3; ++n) kernels.push_back(Kernel(dir, n));
  constexpr int kMachines = 4;
  std::vector<Child> children;
  for (int m = 0; m < kMachines; ++m) {
    std::vector<std::string> args = {"--remote", server.Url(), absl::StrCat(dir, "/machine", m)};
    for (int k = 0; k < 3; ++k) args.push_back(kernels[(k + m) % 3]);  // different orders
    children.push_back(Spawn(args, absl::StrCat(dir, "/log", m)));
  }
  std::map<std::string, int> compiles;                  // kernel → compiles
  std::map<std::string, std::set<std::string>> cubins;  // kernel → distinct cubins
  for (int m = 0; m < kMachines; ++m) {
    ASSERT_EQ(Wait(children[m]), 0) << Slurp(children[m].err);
    auto results = Results(children[m]);
    ASSERT_EQ(results.size(), 3u) << Slurp(children[m].out);
    for (int k = 0; k < 3; ++k) {
      const std::string& kernel = kernels[(k + m) % 3];
      const auto& [how, cubin] = results[k];
      EXPECT_TRUE(how == "compiled" || how == "remote") << how;
      compiles[kernel] += how == "compiled";
      cubins[kernel].insert(cubin);
    }
  }
  for (const std::string& kernel : kernels) {
    EXPECT_EQ(compiles[kernel], 1) << kernel;
    EXPECT_EQ(cubins[kernel].size(), 1u) << kernel;
  }
  // A new machine gets all three from the server; its disk then holds them.
  const std::string fresh = absl::StrCat(dir, "/machine-new");
  Child late =
      Spawn({"--remote", server.Url(), fresh, kernels[0], kernels[1], kernels[2]}, dir + "/late");
  ASSERT_EQ(Wait(late), 0) << Slurp(late.err);
  for (const auto& [how, cubin] : Results(late)) EXPECT_EQ(how, "remote");
  Child again =
      Spawn({"--remote", server.Url(), fresh, kernels[0], kernels[1], kernels[2]}, dir + "/again");
  ASSERT_EQ(Wait(again), 0) << Slurp(again.err);
  for (const auto& [how, cubin] : Results(again)) EXPECT_EQ(how, "disk");
  // The CLI shows the fleet's view.
  const std::string stats = dir + "/stats.txt";
  ASSERT_EQ(std::system(absl::StrCat(Runfile("tools/tessera-jit/tessera-jit"), " cache explain ",
                                     kernels[0], " --target nvptx --dir ", dir,
                                     "/machine-empty --remote-url ", server.Url(), " > ", stats)
                            .c_str()),
            0);
  EXPECT_THAT(Slurp(stats), HasSubstr("verdict: remote hit"));
  ASSERT_EQ(std::system(absl::StrCat(Runfile("tools/tessera-jit/tessera-jit"),
                                     " cache stats --remote-url ", server.Url(), " > ", stats)
                            .c_str()),
            0);
  const std::string text = Slurp(stats);
  EXPECT_THAT(text, HasSubstr("artifacts:     3 ("));
  EXPECT_THAT(text, HasSubstr("stores:      3 (failed 0)"));
  EXPECT_THAT(text, HasSubstr("hit latency:"));
  // With the counters' hash overwritten by a plain string (any client can), the CLI still
  // reports what it can and names the damaged key.
  auto stats_keys = server.Admin().Command({"KEYS", "tessera-jit:*:stats"});
  ASSERT_TRUE(stats_keys.ok());
  ASSERT_EQ(stats_keys->elements.size(), 1u);
  const std::string stats_key = stats_keys->elements[0].text;
  ASSERT_TRUE(server.Admin().Command({"SET", stats_key, "overwritten"}).ok());
  ASSERT_EQ(
      std::system(absl::StrCat(Runfile("tools/tessera-jit/tessera-jit"),
                               " cache stats --remote-url ", server.Url(), " > ", stats, " 2>&1")
                      .c_str()),
      0);
  const std::string damaged = Slurp(stats);
  EXPECT_THAT(damaged, HasSubstr("artifacts:     3 ("));
  EXPECT_THAT(damaged, HasSubstr(absl::StrCat("damaged key:   ", stats_key, " (WRONGTYPE")));
  ASSERT_EQ(std::system(absl::StrCat(Runfile("tools/tessera-jit/tessera-jit"),
                                     " cache clear --remote-url ", server.Url(), " > ", stats)
                            .c_str()),
            0);
  EXPECT_THAT(Slurp(stats), HasSubstr("removed"));
  auto size = server.Admin().Command({"DBSIZE"});
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->integer, 0);
}

TEST(FleetTest, TheServerKilledAndRestartedMidRunNeverFailsACompile) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  const std::string dir = Scratch("restart");
  std::vector<std::string> kernels;
  for (int n = 10; n < 22; ++n) kernels.push_back(Kernel(dir, n));
  std::vector<Child> children;
  for (int m = 0; m < 3; ++m) {
    std::vector<std::string> args = {"--remote", server.Url("?timeout_ms=200"),
                                     absl::StrCat(dir, "/machine", m)};
    args.insert(args.end(), kernels.begin(), kernels.end());
    children.push_back(Spawn(args, absl::StrCat(dir, "/log", m)));
  }
  absl::SleepFor(absl::Milliseconds(150));
  server.Kill();
  absl::SleepFor(absl::Milliseconds(300));
  server.Start();
  ASSERT_TRUE(server.running());
  for (const Child& child : children) {
    ASSERT_EQ(Wait(child), 0) << Slurp(child.err);
    EXPECT_EQ(Results(child).size(), kernels.size()) << Slurp(child.out);
  }
}

TEST(FleetTest, ALeaseHolderKilledWithSigkillIsTakenOverWhenItsLeaseExpires) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  const std::string dir = Scratch("sigkill");
  const std::string kernel = Kernel(dir, 42);
  Child holder = Spawn({"--remote", server.Url("?timeout_ms=300&lease_ms=1000"), "--hold-lease",
                        dir + "/holder", kernel},
                       dir + "/holder");
  for (int i = 0; i < 500 && Slurp(holder.out).find("held") == std::string::npos; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_THAT(Slurp(holder.out), HasSubstr("held")) << Slurp(holder.err);
  kill(holder.pid, SIGKILL);
  Wait(holder);
  Child next = Spawn({"--remote", server.Url(), dir + "/next", kernel}, dir + "/next");
  ASSERT_EQ(Wait(next), 0) << Slurp(next.err);
  auto results = Results(next);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].first, "compiled");
  EXPECT_THAT(Slurp(next.out), HasSubstr("takeovers=1 timeouts=0"));
}

TEST(FleetTest, ACorruptedValueIsAMissThenRecompiledAndOverwritten) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  const std::string dir = Scratch("corrupt");
  const std::string kernel = Kernel(dir, 7);
  Child first = Spawn({"--remote", server.Url(), dir + "/a", kernel}, dir + "/a");
  ASSERT_EQ(Wait(first), 0) << Slurp(first.err);
  auto names = server.Admin().Command({"KEYS", "tessera-jit:*:a:*"});
  ASSERT_TRUE(names.ok());
  ASSERT_EQ(names->elements.size(), 1u);
  ASSERT_EQ(server.Cli(absl::StrCat("SETRANGE ", names->elements[0].text, " 2000 CORRUPTED")), 0);
  Child second = Spawn({"--remote", server.Url(), dir + "/b", kernel}, dir + "/b");
  ASSERT_EQ(Wait(second), 0) << Slurp(second.err);
  Child third = Spawn({"--remote", server.Url(), dir + "/c", kernel}, dir + "/c");
  ASSERT_EQ(Wait(third), 0) << Slurp(third.err);
  ASSERT_EQ(Results(first).size(), 1u);
  ASSERT_EQ(Results(second).size(), 1u);
  ASSERT_EQ(Results(third).size(), 1u);
  EXPECT_EQ(Results(second)[0].first, "compiled");  // the damaged value was a miss
  EXPECT_EQ(Results(third)[0].first, "remote");     // the recompile overwrote it
  EXPECT_EQ(Results(third)[0].second, Results(first)[0].second);
}

TEST(FleetTest, AWrongPasswordCompilesLocallyWithOneWarning) {
  testing::RedisServer server("fleet-secret");
  ASSERT_TRUE(server.running());
  const std::string dir = Scratch("password");
  const std::string url = absl::StrCat("redis://:not-the-secret@127.0.0.1:", server.port());
  Child child = Spawn({"--remote", url, dir + "/a", Kernel(dir, 1), Kernel(dir, 2)}, dir + "/a");
  ASSERT_EQ(Wait(child), 0) << Slurp(child.err);
  auto results = Results(child);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].first, "compiled");
  EXPECT_EQ(results[1].first, "compiled");
  const std::string log = Slurp(child.err);
  EXPECT_THAT(log, HasSubstr("authentication failed"));
  EXPECT_EQ(log.find("warning"), log.rfind("warning")) << log;
  EXPECT_EQ(log.find("not-the-secret"), std::string::npos) << log;
}

TEST(FleetTest, AnArbiterDecisionIsMeasuredOnceAndSharedWithAnotherProcess) {
  testing::RedisServer server;
  ASSERT_TRUE(server.running());
  const std::string dir = Scratch("decisions");
  // Two modules (two artifacts) with the same matmul: one arbitration point.
  auto matmul = [&](const std::string& name) {
    const std::string path = absl::StrCat(dir, "/", name, ".mlir");
    std::ofstream(path) << "func.func @" << name
                        << "(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: "
                           "memref<64x64xf32>) {\n  tile.matmul %a, %b -> %c : "
                           "memref<64x64xf32>, memref<64x64xf32> -> memref<64x64xf32>\n"
                           "  return\n}\n";
    return path;
  };
  Child first =
      Spawn({"--remote", server.Url(), "--decide", dir + "/a", matmul("first")}, dir + "/a");
  ASSERT_EQ(Wait(first), 0) << Slurp(first.err);
  Child second =
      Spawn({"--remote", server.Url(), "--decide", dir + "/b", matmul("second")}, dir + "/b");
  ASSERT_EQ(Wait(second), 0) << Slurp(second.err);
  const std::string a = Slurp(first.out), b = Slurp(second.out);
  EXPECT_THAT(a, HasSubstr("decision measured "));
  EXPECT_THAT(a, HasSubstr("decisions stores=1 remote_hits=0"));
  EXPECT_THAT(b, HasSubstr("decision cache "));
  EXPECT_THAT(b, HasSubstr("decisions stores=0 remote_hits=1"));
  // The same winner.
  auto winner = [](const std::string& out) {
    const size_t at = out.find("decision ");
    return out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_EQ(winner(a).substr(winner(a).rfind(' ')), winner(b).substr(winner(b).rfind(' ')));
}

}  // namespace
}  // namespace tessera::service

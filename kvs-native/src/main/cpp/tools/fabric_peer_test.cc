// Peers in their own processes: a client killed with SIGKILL in the middle
// of writing a request leaves the server unharmed and its connection
// released; a client process completes round trips; a server process killed
// under a client fails its calls in time.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "channel/client.h"
#include "channel/server.h"

namespace kvs::channel {
namespace {

class Echo : public RequestHandler {
 public:
  void Handle(channel::Session* /*session*/, std::string_view request,
              std::string* reply) override {
    reply->assign(request);
  }
};

// Starts the peer with `args`; its stdout is readable from *out.
pid_t Spawn(std::vector<std::string> args, FILE** out) {
  int pipe_fds[2];
  EXPECT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::close(pipe_fds[0]);
    std::vector<char*> argv;
    std::string program = KVS_FABRIC_PEER_PATH;
    argv.push_back(program.data());
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  *out = ::fdopen(pipe_fds[0], "r");
  return pid;
}

class FabricPeerTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    ServerOptions options;
    fabric::ParseProvider(GetParam(), &options.endpoint.provider);
    if (options.endpoint.provider == fabric::Provider::kTcp) {
      options.endpoint.node = "127.0.0.1";
    }
    ASSERT_TRUE(Server::Start(options, &echo_, &server_).ok());
  }
  Echo echo_;
  std::unique_ptr<Server> server_;
};

TEST_P(FabricPeerTest, AClientKilledMidMessageIsReleasedAndOthersServed) {
  FILE* out = nullptr;
  const pid_t pid =
      Spawn({GetParam(), std::to_string(server_->port()), "partial"}, &out);
  char line[64] = {};
  ASSERT_NE(std::fgets(line, sizeof line, out), nullptr);
  EXPECT_STREQ(line, "WROTE\n");
  EXPECT_EQ(server_->stats().connections_open, 1u);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::fclose(out);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server_->stats().connections_open != 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(server_->stats().connections_open, 0u);
  EXPECT_EQ(server_->stats().requests,
            0u);  // the half message was never served
  // Another client process is served as before.
  const pid_t calls = Spawn(
      {GetParam(), std::to_string(server_->port()), "calls", "100"}, &out);
  ASSERT_NE(std::fgets(line, sizeof line, out), nullptr);
  EXPECT_STREQ(line, "OK 100\n");
  ::waitpid(calls, &status, 0);
  std::fclose(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A client process that dies with 100 KB replies in flight: those writes
// never complete (nobody drives them at the dead end). On shm they once
// filled the server's one shared transmit queue, so the next client's
// replies could not be posted and it was dropped; with an endpoint per
// connection they clog only the dead client's, which closes with it.
TEST_P(FabricPeerTest, ClientsLeavingMidReplyDoNotStallTheNextOnes) {
  FILE* out = nullptr;
  char line[64] = {};
  int status = 0;
  for (int round = 0; round < 3; ++round) {
    const pid_t leaver = Spawn(
        {GetParam(), std::to_string(server_->port()), "leave", "20"}, &out);
    ASSERT_NE(std::fgets(line, sizeof line, out), nullptr);
    EXPECT_STREQ(line, "LEAVING\n");
    ::waitpid(leaver, &status, 0);
    std::fclose(out);
    const pid_t calls = Spawn(
        {GetParam(), std::to_string(server_->port()), "calls", "200"}, &out);
    ASSERT_NE(std::fgets(line, sizeof line, out), nullptr)
        << "round " << round << ": the next client got no answers";
    EXPECT_STREQ(line, "OK 200\n");
    ::waitpid(calls, &status, 0);
    std::fclose(out);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

TEST_P(FabricPeerTest, AServerProcessKilledFailsTheClientsCallsInTime) {
  FILE* out = nullptr;
  const pid_t pid = Spawn({GetParam(), "0", "serve"}, &out);
  char line[64] = {};
  ASSERT_NE(std::fgets(line, sizeof line, out), nullptr);
  unsigned port = 0;
  ASSERT_EQ(std::sscanf(line, "PORT %u", &port), 1) << line;
  ClientOptions options;
  fabric::ParseProvider(GetParam(), &options.endpoint.provider);
  if (options.endpoint.provider == fabric::Provider::kTcp) {
    options.endpoint.node = "127.0.0.1";
  }
  options.request_timeout = std::chrono::milliseconds(1000);
  std::unique_ptr<Client> client;
  ASSERT_TRUE(Client::Connect(options, "127.0.0.1", static_cast<uint16_t>(port),
                              &client)
                  .ok());
  std::string reply;
  ASSERT_TRUE(client->Call("before", &reply).ok());
  EXPECT_EQ(reply, "before");
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::fclose(out);
  const auto start = std::chrono::steady_clock::now();
  const Status after = client->Call("after", &reply);
  EXPECT_FALSE(after.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3))
      << after.ToString();
  EXPECT_FALSE(client->health().ok());
}

// tcp between two network namespaces joined by a veth pair: the client
// process in its own namespace, the server in the test's. Needs root and
// iproute2 (as CI has); skipped, saying why, elsewhere.
class FabricNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0 ||
        std::system("ip netns list > /dev/null 2>&1") != 0) {
      GTEST_SKIP() << "needs root and iproute2 to create network namespaces";
    }
    const std::string id = std::to_string(::getpid() % 100000);
    // A subnet of our own, so concurrent test runs do not share routes.
    subnet_ = "10.77." + std::to_string(::getpid() % 250) + ".";
    namespace_ = "kvs-" + id;
    host_ = "kvsh" + id;
    peer_ = "kvsp" + id;
    const std::string setup =
        "ip netns add " + namespace_ + " && ip link add " + host_ +
        " type veth peer name " + peer_ + " && ip link set " + peer_ +
        " netns " + namespace_ + " && ip addr add " + subnet_ + "2/24 dev " +
        host_ + " && ip link set " + host_ + " up && ip netns exec " +
        namespace_ + " ip addr add " + subnet_ + "1/24 dev " + peer_ +
        " && ip netns exec " + namespace_ + " ip link set " + peer_ +
        " up && ip netns exec " + namespace_ + " ip link set lo up";
    created_ = true;
    if (std::system(setup.c_str()) != 0) {
      GTEST_SKIP() << "could not create a network namespace with a veth pair";
    }
  }
  void TearDown() override {
    if (!created_) return;
    const std::string cleanup = "ip link delete " + host_ +
                                " > /dev/null 2>&1; ip netns delete " +
                                namespace_ + " > /dev/null 2>&1";
    [[maybe_unused]] const int ignored = std::system(cleanup.c_str());
  }
  std::string namespace_, host_, peer_, subnet_;
  bool created_ = false;
};

TEST_F(FabricNetnsTest, RoundTripsCrossNamespacesOverTcp) {
  Echo echo;
  ServerOptions options;
  options.endpoint.provider = fabric::Provider::kTcp;
  options.endpoint.node = subnet_ + "2";
  options.host = subnet_ + "2";
  std::unique_ptr<Server> server;
  const Status started = Server::Start(options, &echo, &server);
  ASSERT_TRUE(started.ok()) << started.ToString();
  const std::string command =
      "KVS_PEER_SERVER=" + subnet_ + "2 KVS_PEER_NODE=" + subnet_ +
      "1 ip netns exec " + namespace_ + " " + KVS_FABRIC_PEER_PATH + " tcp " +
      std::to_string(server->port()) + " calls 500";
  FILE* out = ::popen(command.c_str(), "r");
  ASSERT_NE(out, nullptr);
  char line[64] = {};
  const bool got = std::fgets(line, sizeof line, out) != nullptr;
  const int status = ::pclose(out);
  ASSERT_TRUE(got);
  EXPECT_STREQ(line, "OK 500\n");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(server->stats().requests, 500u);
}

INSTANTIATE_TEST_SUITE_P(Providers, FabricPeerTest,
                         ::testing::Values("shm", "tcp"),
                         [](const auto& param_info) {
                           return std::string(param_info.param);
                         });

}  // namespace
}  // namespace kvs::channel

// kvs_fabric_peer: a fabric client or server in its own process, for tests
// that must kill a peer (tools/fabric_peer_test.cc forks it and sends
// SIGKILL).
//
//   kvs_fabric_peer <shm|tcp> <port> partial   connect, write the header of
//       a request whose payload never follows, print "WROTE", wait forever
//   kvs_fabric_peer <shm|tcp> <port> calls N   make N round trips, print
//       "OK N"
//   kvs_fabric_peer <shm|tcp> <port> leave N   make N round trips of 100 KB
//       (replies in parts), keep 4 more outstanding, print "LEAVING" and
//       exit without closing the connection
//   kvs_fabric_peer <shm|tcp> 0 serve          start an echo server, print
//       "PORT p" (its bootstrap port), serve until killed
//
// The server is on KVS_PEER_SERVER (default 127.0.0.1); a tcp endpoint
// binds KVS_PEER_NODE (default 127.0.0.1). Exit status 2 on any error.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "channel/bootstrap.h"
#include "channel/client.h"
#include "channel/message_format.h"
#include "channel/server.h"
#include "fabric/endpoint.h"
#include "io/aligned_buffer.h"

namespace {

using kvs::Status;
namespace channel = kvs::channel;
namespace fabric = kvs::fabric;

int Fail(const Status& status) {
  std::fprintf(stderr, "kvs_fabric_peer: %s\n", status.ToString().c_str());
  return 2;
}

fabric::EndpointOptions Options(const char* provider) {
  fabric::EndpointOptions options;
  if (!fabric::ParseProvider(provider, &options.provider)) {
    std::fprintf(stderr, "unknown provider %s\n", provider);
    std::exit(2);
  }
  if (options.provider != fabric::Provider::kShm) {
    const char* node = std::getenv("KVS_PEER_NODE");
    options.node = node != nullptr ? node : "127.0.0.1";
  }
  return options;
}

std::string ServerHost() {
  const char* host = std::getenv("KVS_PEER_SERVER");
  return host != nullptr ? host : "127.0.0.1";
}

int Partial(const fabric::EndpointOptions& options, uint16_t port) {
  std::unique_ptr<fabric::Endpoint> endpoint;
  Status status = fabric::Endpoint::Open(options, &endpoint);
  if (!status.ok()) return Fail(status);
  kvs::io::AlignedBuffer buffer(8192);
  std::memset(buffer.data(), 0, buffer.size());
  std::unique_ptr<fabric::MemoryRegion> region;
  status = endpoint->Register(buffer.data(), buffer.size(), &region);
  if (!status.ok()) return Fail(status);
  int socket = -1;
  status =
      channel::Connect(ServerHost(), port, std::chrono::seconds(2), &socket);
  if (!status.ok()) return Fail(status);
  channel::Challenge challenge;  // the test's server requires no secret
  status = channel::ReadChallenge(socket, std::chrono::seconds(2), &challenge);
  if (!status.ok()) return Fail(status);
  channel::Hello hello;
  hello.provider = options.provider;
  hello.address = endpoint->address();
  hello.reply_buffer = {region->RemoteAddress(4096), region->key(), 4096};
  hello.request_buffer_bytes = 4096;
  status = channel::WriteAll(socket, channel::EncodeHello(hello),
                             std::chrono::seconds(2));
  channel::Welcome welcome;
  if (status.ok()) {
    status = channel::ReadWelcome(socket, std::chrono::seconds(2), &welcome);
  }
  if (status.ok()) status = welcome.status;
  fi_addr_t server = 0;
  if (status.ok()) status = endpoint->AddPeer(welcome.address, &server);
  if (!status.ok()) return Fail(status);
  // A whole request, of which only the header unit is written.
  channel::MessageHeader header;
  header.kind = channel::MessageKind::kRequest;
  header.reply_capacity = 512;
  const std::string payload(100, 'p');
  channel::EncodeMessage(header, payload, buffer.data());
  bool done = false;
  status = endpoint->PostWrite(server, buffer.data(), channel::kHeaderBytes,
                               *region, welcome.request_buffer.address,
                               welcome.request_buffer.key,
                               [&](Status) { done = true; });
  if (!status.ok()) return Fail(status);
  while (!done) endpoint->Progress();
  std::printf("WROTE\n");
  std::fflush(stdout);
  for (;;) {
    endpoint->Progress();
    ::usleep(1000);
  }
}

int Calls(const fabric::EndpointOptions& options, uint16_t port, int count) {
  channel::ClientOptions client_options;
  client_options.endpoint = options;
  std::unique_ptr<channel::Client> client;
  Status status =
      channel::Client::Connect(client_options, ServerHost(), port, &client);
  if (!status.ok()) return Fail(status);
  std::string reply;
  for (int i = 0; i < count; ++i) {
    status = client->Call("ping " + std::to_string(i), &reply);
    if (!status.ok()) return Fail(status);
  }
  std::printf("OK %d\n", count);
  return 0;
}

int Leave(const fabric::EndpointOptions& options, uint16_t port, int count) {
  channel::ClientOptions client_options;
  client_options.endpoint = options;
  client_options.reply_buffer_bytes = 1u << 20;
  client_options.request_buffer_bytes = 1u << 20;
  std::unique_ptr<channel::Client> client;
  Status status =
      channel::Client::Connect(client_options, ServerHost(), port, &client);
  if (!status.ok()) return Fail(status);
  const std::string big(100 * 1024, 'b');
  std::string reply;
  for (int i = 0; i < count; ++i) {
    status = client->Call(big, &reply);
    if (!status.ok()) return Fail(status);
  }
  for (int i = 0; i < 4; ++i) {
    status = client->Submit(big, [](Status, std::string_view) {});
    if (!status.ok() && !status.IsBusy()) return Fail(status);
  }
  client->Poll();
  std::printf("LEAVING\n");
  std::fflush(stdout);
  std::_Exit(0);  // no goodbye: the process is simply gone
}

class Echo : public channel::RequestHandler {
 public:
  void Handle(channel::Session* /*session*/, std::string_view request,
              std::string* reply) override {
    reply->assign(request);
  }
};

int Serve(const fabric::EndpointOptions& options) {
  Echo echo;
  channel::ServerOptions server_options;
  server_options.endpoint = options;
  std::unique_ptr<channel::Server> server;
  const Status status = channel::Server::Start(server_options, &echo, &server);
  if (!status.ok()) return Fail(status);
  std::printf("PORT %u\n", static_cast<unsigned>(server->port()));
  std::fflush(stdout);
  for (;;) ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: kvs_fabric_peer <shm|tcp> <port> partial|calls "
                 "N|leave N|serve\n");
    return 2;
  }
  const fabric::EndpointOptions options = Options(argv[1]);
  const auto port = static_cast<uint16_t>(std::atoi(argv[2]));
  if (std::strcmp(argv[3], "partial") == 0) return Partial(options, port);
  if (std::strcmp(argv[3], "serve") == 0) return Serve(options);
  if (std::strcmp(argv[3], "leave") == 0 && argc > 4) {
    return Leave(options, port, std::atoi(argv[4]));
  }
  if (std::strcmp(argv[3], "calls") == 0 && argc > 4) {
    return Calls(options, port, std::atoi(argv[4]));
  }
  std::fprintf(stderr, "unknown mode %s\n", argv[3]);
  return 2;
}

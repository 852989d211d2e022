// kvs_loopback_floor [--hops H] [--rounds N] [--bytes B] [--spin-us S]:
// the machine's floor for a request over loopback TCP, with none of KVS in
// it. A client process sends B bytes through a chain of H relay processes
// (each a single thread blocking in epoll_wait, as a shard does) and waits
// for them to come back: H = 1 is a read's path (client -> server ->
// client), H = 2 a replicated write's (client -> primary -> backup ->
// primary -> client). With --spin-us S every process polls for S
// microseconds before it blocks, as a spinning data plane would.
//
// Prints one line, `key=value` pairs: round trips, latency mean and
// percentiles in microseconds, and the relays' CPU microseconds and context
// switches per round trip (getrusage of the reaped children) -- what KVS's
// own numbers in docs/BENCHMARKS.md are compared with. Exits 2 for bad
// arguments, 1 when a socket call fails.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::exit(1);
}

// A connected pair of loopback TCP sockets (Nagle off on both ends).
void ConnectedPair(int* one, int* other) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) Die("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) !=
          0) {
    Die("listen");
  }
  *one = ::socket(AF_INET, SOCK_STREAM, 0);
  if (*one < 0 || ::connect(*one, reinterpret_cast<sockaddr*>(&address),
                            sizeof address) != 0) {
    Die("connect");
  }
  *other = ::accept(listener, nullptr, nullptr);
  if (*other < 0) Die("accept");
  ::close(listener);
  const int on = 1;
  ::setsockopt(*one, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  ::setsockopt(*other, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

// Reads exactly `n` bytes; false at the peer's end.
bool ReadFull(int fd, char* buffer, size_t n) {
  for (size_t done = 0; done < n;) {
    const ssize_t got = ::read(fd, buffer + done, n - done);
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

void WriteFull(int fd, const char* buffer, size_t n) {
  for (size_t done = 0; done < n;) {
    const ssize_t put = ::write(fd, buffer + done, n - done);
    if (put <= 0) Die("write");
    done += static_cast<size_t>(put);
  }
}

// Waits for one readable descriptor of `epoll`: polls for `spin_us` first.
int WaitOne(int epoll, int spin_us) {
  epoll_event event{};
  if (spin_us > 0) {
    const auto until = Clock::now() + std::chrono::microseconds(spin_us);
    do {
      if (::epoll_wait(epoll, &event, 1, 0) == 1) return event.data.fd;
    } while (Clock::now() < until);
  }
  while (true) {
    const int n = ::epoll_wait(epoll, &event, 1, -1);
    if (n == 1) return event.data.fd;
    if (n < 0 && errno != EINTR) Die("epoll_wait");
  }
}

int EpollOf(std::initializer_list<int> fds) {
  const int epoll = ::epoll_create1(0);
  if (epoll < 0) Die("epoll_create1");
  for (const int fd : fds) {
    if (fd < 0) continue;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) != 0) Die("epoll_ctl");
  }
  return epoll;
}

// A relay: what comes from upstream goes downstream (or back, if last);
// what comes from downstream goes back upstream. Ends at upstream's end.
[[noreturn]] void Relay(int upstream, int downstream, size_t bytes,
                        int spin_us) {
  const int epoll = EpollOf({upstream, downstream});
  std::vector<char> buffer(bytes);
  while (true) {
    const int fd = WaitOne(epoll, spin_us);
    if (!ReadFull(fd, buffer.data(), bytes)) std::_Exit(0);
    const int to = fd == upstream && downstream >= 0 ? downstream : upstream;
    WriteFull(to, buffer.data(), bytes);
  }
}

double Percentile(const std::vector<double>& sorted, double p) {
  const size_t index = static_cast<size_t>(p / 100.0 * (sorted.size() - 1));
  return sorted[index];
}

int Usage() {
  std::fprintf(stderr,
               "usage: kvs_loopback_floor [--hops H (1-4)] [--rounds N] "
               "[--bytes B] [--spin-us S]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int hops = 1;
  long rounds = 20000;
  size_t bytes = 100;
  int spin_us = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return Usage();
    const long value = std::strtol(argv[++i], nullptr, 10);
    if (flag == "--hops") {
      hops = static_cast<int>(value);
    } else if (flag == "--rounds") {
      rounds = value;
    } else if (flag == "--bytes") {
      bytes = static_cast<size_t>(value);
    } else if (flag == "--spin-us") {
      spin_us = static_cast<int>(value);
    } else {
      return Usage();
    }
  }
  if (hops < 1 || hops > 4 || rounds < 100 || bytes < 1 || bytes > 65536 ||
      spin_us < 0) {
    return Usage();
  }
  // Link k joins process k (0: the client) and relay k + 1.
  std::vector<int> near(hops), far(hops);
  for (int k = 0; k < hops; ++k) ConnectedPair(&near[k], &far[k]);
  std::vector<pid_t> relays;
  for (int k = 0; k < hops; ++k) {
    const pid_t pid = ::fork();
    if (pid < 0) Die("fork");
    if (pid == 0) {
      const int upstream = far[k];
      const int downstream = k + 1 < hops ? near[k + 1] : -1;
      for (int j = 0; j < hops; ++j) {
        if (far[j] != upstream) ::close(far[j]);
        if (near[j] != downstream) ::close(near[j]);
      }
      Relay(upstream, downstream, bytes, spin_us);
    }
    relays.push_back(pid);
  }
  for (int k = 0; k < hops; ++k) {
    ::close(far[k]);
    if (k > 0) ::close(near[k]);
  }
  const int link = near[0];
  const int epoll = EpollOf({link});
  std::vector<char> buffer(bytes, 'x');
  const long warmup = rounds / 10;
  std::vector<double> latencies;
  latencies.reserve(static_cast<size_t>(rounds));
  for (long i = 0; i < warmup + rounds; ++i) {
    const auto begin = Clock::now();
    WriteFull(link, buffer.data(), bytes);
    (void)WaitOne(epoll, spin_us);
    if (!ReadFull(link, buffer.data(), bytes)) Die("read");
    if (i >= warmup) {
      latencies.push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - begin)
              .count());
    }
  }
  ::close(link);
  for (const pid_t pid : relays) ::waitpid(pid, nullptr, 0);
  rusage children{};
  ::getrusage(RUSAGE_CHILDREN, &children);
  // The relays' work includes the warm-up: charge it per round trip made.
  const double made = static_cast<double>(warmup + rounds);
  const double cpu_us =
      (children.ru_utime.tv_sec + children.ru_stime.tv_sec) * 1e6 +
      children.ru_utime.tv_usec + children.ru_stime.tv_usec;
  const double switches =
      static_cast<double>(children.ru_nvcsw + children.ru_nivcsw);
  double sum = 0;
  for (const double latency : latencies) sum += latency;
  std::sort(latencies.begin(), latencies.end());
  std::printf(
      "hops=%d bytes=%zu spin_us=%d rounds=%ld mean_us=%.1f p50_us=%.1f "
      "p99_us=%.1f p999_us=%.1f relay_cpu_us_per_rt=%.2f "
      "relay_switches_per_rt=%.2f\n",
      hops, bytes, spin_us, rounds, sum / latencies.size(),
      Percentile(latencies, 50), Percentile(latencies, 99),
      Percentile(latencies, 99.9), cpu_us / made, switches / made);
  return 0;
}

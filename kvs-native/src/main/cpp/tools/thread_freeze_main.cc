// kvs_thread_freeze PID THREAD_NAME: stops one thread of process PID (the
// first whose name is THREAD_NAME) and leaves every other thread running --
// a thread stuck for real, as in a deadlock or a system call that never
// returns -- until this program gets SIGTERM or SIGINT or its stdin closes;
// then lets the thread go on. The fault tests use it to check that a
// server's watchdog stops a server whose shard or replication thread is
// stuck (docs/ARCHITECTURE.md "Watchdog").
//
// How: ptrace(PTRACE_SEIZE) of that thread alone and PTRACE_INTERRUPT (a
// signal would stop the whole process). Prints "frozen TID" once the thread
// is stopped. Exits 0 after letting it go, 3 if the process ended
// meanwhile (the thread was released by its death), 2 for bad arguments or
// no such thread, 1 if ptrace failed (it needs CAP_SYS_PTRACE or a
// permissive kernel.yama.ptrace_scope).

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

// The id of the first thread of `pid` named `name`, or -1.
pid_t FindThread(const std::string& pid, const std::string& name) {
  const std::string tasks = "/proc/" + pid + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return -1;
  pid_t found = -1;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(tasks + "/" + entry->d_name + "/comm");
    std::string thread_name;
    if (std::getline(comm, thread_name) && thread_name == name) {
      found = static_cast<pid_t>(std::atoi(entry->d_name));
      break;
    }
  }
  ::closedir(dir);
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PID THREAD_NAME\n", argv[0]);
    return 2;
  }
  const pid_t tid = FindThread(argv[1], argv[2]);
  if (tid < 0) {
    std::fprintf(stderr, "no thread named %s in process %s\n", argv[2],
                 argv[1]);
    return 2;
  }
  // SIGTERM and SIGINT are read from a descriptor, so that the thread is
  // let go (PTRACE_DETACH) before this program ends.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  const int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC);
  if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0 ||
      ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
    std::fprintf(stderr, "ptrace of thread %d: %s\n", static_cast<int>(tid),
                 std::strerror(errno));
    return 1;
  }
  int status = 0;
  if (::waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status)) {
    std::fprintf(stderr, "thread %d did not stop (status %#x)\n",
                 static_cast<int>(tid), status);
    return 3;
  }
  std::printf("frozen %d\n", static_cast<int>(tid));
  std::fflush(stdout);
  while (true) {
    struct pollfd watched[2] = {{STDIN_FILENO, POLLIN, 0},
                                {signal_fd, POLLIN, 0}};
    const int ready = ::poll(watched, 2, 100);
    // The process may end meanwhile (killed, or stopped by its watchdog):
    // its threads leave their tracer with it.
    const pid_t changed = ::waitpid(tid, &status, __WALL | WNOHANG);
    if (changed == tid && (WIFEXITED(status) || WIFSIGNALED(status))) {
      std::printf("process %s ended\n", argv[1]);
      return 3;
    }
    if (changed == tid && WIFSTOPPED(status)) {
      // Another stop (a signal sent to the thread): it stays stopped;
      // the signal is delivered when the thread is let go.
      continue;
    }
    if (ready <= 0) continue;
    if ((watched[1].revents & POLLIN) != 0) break;  // SIGTERM or SIGINT
    if ((watched[0].revents & (POLLIN | POLLHUP)) != 0) {
      char byte;
      if (::read(STDIN_FILENO, &byte, 1) <= 0) break;  // stdin closed
    }
  }
  if (::ptrace(PTRACE_DETACH, tid, nullptr, nullptr) != 0) {
    std::fprintf(stderr, "letting thread %d go: %s\n", static_cast<int>(tid),
                 std::strerror(errno));
    return 1;
  }
  std::printf("released %d\n", static_cast<int>(tid));
  return 0;
}

# summary: run the Compose demo cluster for real with podman: build the image, start it, wait for every healthcheck, YCSB with dataintegrity, kill a server's container and see its regions recover, tear it down
#
#   ./kvs compose-test
#
# What docker/compose.yaml describes, run on this machine's container engine:
# podman (Docker's engine does not run here), told what it needs on a machine
# whose cgroups are hybrid and whose containers get no network of their own
# (a containers.conf of its own under target/compose: runc, cgroupfs, no
# default ulimits, the host's network), driven by docker-compose through
# podman's Docker API (podman system service on a socket under target/compose;
# podman-compose 1.0 appends an override's command to the base one). The
# cluster is docker/compose.host.yaml: compose.yaml's services on the host's
# network, every process on 127.0.0.1. No registry is reachable, so
# debian:bookworm-slim is made locally once (debootstrap --variant=minbase from
# the Debian mirror, then podman import). Steps:
#   1. the base image (kept), then the KVS image from docker/Dockerfile (it
#      builds the project inside; the host's local certificate authorities go
#      in first, for a network that inspects TLS: docker/extra-ca);
#   2. docker-compose up: ZooKeeper, the master, three region servers; every
#      container's healthcheck passes (podman healthcheck run, polled);
#   3. the compose file's ycsb service: YCSB load and run of workload a with
#      every read verified (./kvs ycsb fails on any operation not OK);
#   4. kill -9 of server s2's container: the master's /api/status shows two
#      live servers and every region open with its whole group in sync again
#      (re-replicated onto the others), then YCSB runs again, verified;
#   5. down, volumes removed (also on failure or Ctrl-C).
# Where podman cannot run a container it says why and skips (exit 0).

KVS_COMPOSE_PACKAGES=(podman runc debootstrap docker-compose curl)
KVS_COMPOSE_PROJECT=kvs-compose-test

cmd_compose_test() {
  ensure_packages "${KVS_COMPOSE_PACKAGES[@]}"
  local work="$KVS_HOME/target/compose"
  mkdir -p "$work"
  compose_engine_conf "$work"
  if ! compose_base_image "$work"; then
    note "podman cannot run a container here (see $work/probe.log): skipped"
    return 0
  fi
  say "Building the KVS image (docker/Dockerfile; the project is built inside)"
  rm -f "$KVS_HOME"/docker/extra-ca/*.crt
  cp /usr/local/share/ca-certificates/*.crt "$KVS_HOME/docker/extra-ca/" 2>/dev/null || true
  (cd "$KVS_HOME" && podman build --network host --pull=never -f docker/Dockerfile -t kvs .) \
    >"$work/build.log" 2>&1 || die "the image build failed: $work/build.log"
  note "image kvs built (log: $work/build.log)"

  compose_api "$work"
  trap compose_stop EXIT
  compose_down
  say "Starting the Compose cluster (ZooKeeper, a master, three servers)"
  compose up -d zookeeper master s1 s2 s3 >"$work/up.log" 2>&1 ||
    die "podman-compose up failed: $work/up.log"
  local service
  for service in zookeeper master s1 s2 s3; do
    compose_await_healthy "$service" 300
  done
  compose_await "every region open with its group in sync" 300 compose_converged 3

  say "YCSB workload a, load and run, every read verified"
  compose run --rm -T --no-deps ycsb >"$work/ycsb-1.log" 2>&1 </dev/null || die "YCSB failed: $work/ycsb-1.log"
  grep -E '^\[(INSERT|READ|UPDATE|VERIFY)\], (Operations|Return)' "$work/ycsb-1.log" | sed 's/^/    /'

  say "kill -9 of server s2's container"
  podman kill --signal KILL "$(compose_container s2)" >/dev/null
  local killed=$SECONDS
  compose_await "s2 gone and every region whole again on s1 and s3" 120 compose_converged 2
  note "recovered $((SECONDS - killed)) s after the kill"
  compose run --rm -T --no-deps ycsb >"$work/ycsb-2.log" 2>&1 </dev/null ||
    die "YCSB after the kill failed: $work/ycsb-2.log"
  grep -E '^\[(READ|UPDATE|VERIFY)\], Return' "$work/ycsb-2.log" | sed 's/^/    /'
  say "The Compose cluster ran, verified YCSB, and recovered a killed server"
}

# podman's configuration for this machine: hybrid cgroups (crun refuses them),
# no RLIMIT_NOFILE raise (the runtimes cannot here), the host's network.
compose_engine_conf() {
  cat >"$1/containers.conf" <<'CONF'
[containers]
default_ulimits = []
netns = "host"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
  export CONTAINERS_CONF="$1/containers.conf"
}

# debian:bookworm-slim made from the Debian mirror (kept once made); false if
# podman cannot run a container from it.
compose_base_image() {
  local work="$1" image=docker.io/library/debian:bookworm-slim
  if ! podman image exists "$image"; then
    say "Making $image with debootstrap (once)"
    local mirror
    mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)"
    rm -rf "$work/rootfs"
    debootstrap --variant=minbase bookworm "$work/rootfs" "${mirror:-http://deb.debian.org/debian}" \
      >"$work/debootstrap.log" 2>&1 || die "debootstrap failed: $work/debootstrap.log"
    tar -C "$work/rootfs" -c . | podman import - "$image" >/dev/null
    rm -rf "$work/rootfs"
  fi
  podman run --rm --network host "$image" true >"$work/probe.log" 2>&1
}

# podman's Docker API on a socket of its own, for docker-compose.
compose_api() {
  local socket="$1/podman.sock"
  rm -f "$socket"
  podman system service --time=0 "unix://$socket" >"$1/service.log" 2>&1 &
  KVS_COMPOSE_API_PID=$!
  export DOCKER_HOST="unix://$socket"
  local started=$SECONDS
  until [[ -S "$socket" ]]; do
    ((SECONDS - started > 30)) && die "podman's API did not start: $1/service.log"
    sleep 0.2 # the socket appears once the service listens
  done
}

compose() {
  (cd "$KVS_HOME" && docker-compose -p "$KVS_COMPOSE_PROJECT" -f docker/compose.host.yaml "$@")
}

compose_down() {
  compose down -v >/dev/null 2>&1 || true
}

# The cluster down and its volumes gone, then podman's API stopped.
compose_stop() {
  compose_down
  [[ -n "${KVS_COMPOSE_API_PID:-}" ]] && kill "$KVS_COMPOSE_API_PID" 2>/dev/null
  return 0
}

compose_container() {
  echo "${KVS_COMPOSE_PROJECT}_$1_1"
}

compose_await_healthy() {
  local service="$1" limit="$2" started=$SECONDS
  until podman healthcheck run "$(compose_container "$service")" >/dev/null 2>&1; do
    if ((SECONDS - started > limit)); then
      podman logs --tail 30 "$(compose_container "$service")" 2>&1 | sed 's/^/    /'
      die "$service not healthy within ${limit}s"
    fi
    sleep 2 # a poll of the container's healthcheck, which has no event to wait for
  done
  note "$service healthy after $((SECONDS - started)) s"
}

compose_await() {
  local what="$1" limit="$2" started=$SECONDS
  shift 2
  until "$@"; do
    ((SECONDS - started > limit)) && die "not within ${limit}s: $what"
    sleep 2 # polling the master's status page
  done
}

# Whether the master's /api/status shows $1 live servers and every region open
# with its whole group in sync.
compose_converged() {
  curl -fsS http://127.0.0.1:8080/api/status 2>/dev/null | python3 -c '
import json, sys
status = json.load(sys.stdin)
summary = status["summary"]
ok = (summary["servers"] == int(sys.argv[1]) and summary["regions"] > 0
      and summary["byState"]["OPEN"] == summary["regions"]
      and status["master"]["converged"])
sys.exit(0 if ok else 1)' "$1"
}

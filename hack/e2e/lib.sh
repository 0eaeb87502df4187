# shellcheck shell=bash
# Helpers for hack/e2e/run.sh and build.sh (sourced): logging, waiting, and the processes the
# harness starts (each in its own process group, all stopped by stop_all).

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# wait_until TIMEOUT_SECONDS COMMAND...: retries COMMAND (quietly) four times a second.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.25
  done
}

# port_open PORT: something listens on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port VAR: sets VAR to a TCP port nothing on 127.0.0.1 listens on (inside the harness's
# own network namespace every port is free; this matters only with E2E_NETNS=0).
# Ports come from below Linux's ephemeral range (32768-60999), where a component's outgoing
# connection could take one before its server binds it, and none is handed out twice.
GIVEN_PORTS=" "
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 12000))
    [[ $GIVEN_PORTS == *" $p "* ]] && continue
    port_open "$p" && continue
    GIVEN_PORTS+="$p "
    printf -v "$1" %s "$p"
    return 0
  done
  die "no free port found"
}

# start NAME COMMAND...: runs COMMAND in its own process group (setsid), output to
# $RUN/logs/NAME.log. The pid (= process group id) is remembered for stop_all.
STARTED_PIDS=()
STARTED_NAMES=()
start() {
  local name=$1; shift
  log "starting $name"
  setsid "$@" >"$RUN/logs/$name.log" 2>&1 </dev/null &
  STARTED_PIDS+=("$!")
  STARTED_NAMES+=("$name")
}
# alive NAME: the process started as NAME is still running (else print its log's tail).
alive() {
  local i
  for i in "${!STARTED_NAMES[@]}"; do
    if [ "${STARTED_NAMES[$i]}" == "$1" ]; then
      kill -0 "${STARTED_PIDS[$i]}" 2>/dev/null && return 0
      log "$1 exited; the end of its log:"; tail -n 30 "$RUN/logs/$1.log" >&2
      return 1
    fi
  done
  return 1
}
# stop_all: TERM each started process group, newest first, and the first started (etcd) only
# once the others are gone: kube-apiserver does not stop while it cannot reach its store. KILL
# what is left 10 s after its TERM.
stop_all() {
  local i
  for ((i = ${#STARTED_PIDS[@]} - 1; i >= 1; i--)); do
    kill -TERM -- "-${STARTED_PIDS[$i]}" 2>/dev/null || true
  done
  for ((i = ${#STARTED_PIDS[@]} - 1; i >= 1; i--)); do reap "$i"; done
  if [ ${#STARTED_PIDS[@]} -gt 0 ]; then
    kill -TERM -- "-${STARTED_PIDS[0]}" 2>/dev/null || true
    reap 0
  fi
  STARTED_PIDS=()
  STARTED_NAMES=()
}
# stop NAME: stops the process group started as NAME (TERM, KILL 10 s later), which stop_all
# then no longer stops; fails when none was.
stop() {
  local i
  for i in "${!STARTED_NAMES[@]}"; do
    [ "${STARTED_NAMES[$i]}" == "$1" ] || continue
    kill -TERM -- "-${STARTED_PIDS[$i]}" 2>/dev/null || true
    reap "$i"
    STARTED_PIDS=("${STARTED_PIDS[@]:0:i}" "${STARTED_PIDS[@]:i+1}")
    STARTED_NAMES=("${STARTED_NAMES[@]:0:i}" "${STARTED_NAMES[@]:i+1}")
    return 0
  done
  return 1
}
# reap I: waits up to 10 s for the I-th started process group to end, then KILLs it.
reap() {
  local pid=${STARTED_PIDS[$1]}
  for _ in $(seq 100); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 -- "-$pid" 2>/dev/null; then
    log "${STARTED_NAMES[$1]} ignored SIGTERM: killing it"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

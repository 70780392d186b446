#!/usr/bin/env bash
# `make cluster`: Crescent as several processes on this machine, the way it runs on several.
#
#   PostgreSQL  DATABASE_URL, or a server started here (data kept in .cluster/postgres; as root it
#               runs as the postgres account). It listens on no TCP port, only on a unix socket in
#               .cluster/postgres.sock/ (mode 0700: only this account, and root, can connect), named
#               for CLUSTER_PG_PORT (default 5433)
#   Redis       REDIS_URL, or a redis-server started here on 127.0.0.1:CLUSTER_REDIS_PORT (default
#               6390) with a password generated once into .cluster/redis_password (mode 0600),
#               given to redis-server in a 0600 config file and to the servers in REDIS_URL (an
#               environment variable, so not in `ps` output)
#   servers     a and b: `python -m web serve` on 127.0.0.1:CLUSTER_PORT_A/_B (8001, 8002), one
#               CRESCENT_SECRET_KEY (generated once into .cluster/secret_key), CRESCENT_INSTANCE=a/b
#   router      HAProxy with deploy/haproxy.cfg on HOST:PORT (127.0.0.1:8000); its status page on
#               127.0.0.1:CLUSTER_STATS_PORT/stats (8404)
#
# The database is migrated once before the servers start. Logs: .cluster/logs/. Ctrl-C stops
# everything this script started (a PostgreSQL or Redis given by URL is left alone).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
PORT_A=${CLUSTER_PORT_A:-8001}
PORT_B=${CLUSTER_PORT_B:-8002}
PG_PORT=${CLUSTER_PG_PORT:-5433}
REDIS_PORT=${CLUSTER_REDIS_PORT:-6390}
STATS_PORT=${CLUSTER_STATS_PORT:-8404}
STATE=$ROOT/.cluster
LOGS=$STATE/logs
mkdir -p "$STATE" "$LOGS"

say() { printf '==> %s\n' "$*"; }
die() { printf 'cluster: %s\n' "$*" >&2; exit 1; }

[ -x "$PYTHON" ] || die "no $PYTHON: run make install first (make cluster does)"
command -v haproxy >/dev/null || die "haproxy is not installed (make services)"

PIDS=()
PG_CTL=()
stop_all() {
  trap - INT TERM EXIT
  say "stopping"
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ ${#PG_CTL[@]} -gt 0 ]; then "${PG_CTL[@]}" stop -m fast >/dev/null || true; fi
  say "stopped"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

wait_port() {  # host port what pid
  local i
  for i in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
    if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then die "$3 exited (see $LOGS)"; fi
    sleep 0.1
  done
  die "$3 did not open $1:$2"
}

# --- PostgreSQL ------------------------------------------------------------------------------
if [ -z "${DATABASE_URL:-}" ]; then
  BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$BIN" ] || BIN=$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")
  [ -x "$BIN/initdb" ] || die "PostgreSQL is not installed (make services), or set DATABASE_URL"
  AS=()
  PGDATA=$STATE/postgres
  if [ "$(id -u)" = 0 ]; then
    # initdb refuses root: the cluster belongs to the postgres account, which must reach it.
    AS=(runuser -u postgres --)
    if ! "${AS[@]}" test -x "$STATE"; then
      PGDATA=/var/lib/postgresql/crescent-cluster
      say "postgres cannot reach $STATE; its data lives in $PGDATA"
    fi
  fi
  # Trust authentication, but only on a unix socket in a directory nobody else may enter: no TCP.
  PGSOCK=$PGDATA.sock
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    say "creating the PostgreSQL data directory $PGDATA"
    mkdir -p "$PGDATA"
    [ ${#AS[@]} -eq 0 ] || chown postgres "$PGDATA"
    chmod 700 "$PGDATA"
    "${AS[@]}" "$BIN/initdb" -D "$PGDATA" --auth-local=trust --auth-host=reject -U postgres >"$LOGS/initdb.log"
  fi
  mkdir -p "$PGSOCK"
  [ ${#AS[@]} -eq 0 ] || chown postgres "$PGSOCK"
  chmod 700 "$PGSOCK"
  PG_CTL=("${AS[@]}" "$BIN/pg_ctl" -D "$PGDATA")
  say "starting PostgreSQL on the unix socket $PGSOCK/.s.PGSQL.$PG_PORT"
  "${PG_CTL[@]}" -l "$PGDATA/server.log" -w -o "-p $PG_PORT -c listen_addresses='' -c unix_socket_directories='$PGSOCK' -c unix_socket_permissions=0700" start >/dev/null \
    || { PG_CTL=(); die "PostgreSQL did not start (see $PGDATA/server.log)"; }
  PSQL=("${AS[@]}" "$BIN/psql" -h "$PGSOCK" -p "$PG_PORT" -U postgres)
  if [ -z "$("${PSQL[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = 'crescent'")" ]; then
    "${PSQL[@]}" -qc 'CREATE DATABASE crescent'
  fi
  DATABASE_URL="postgresql://postgres@/crescent?host=$PGSOCK&port=$PG_PORT"
fi
export DATABASE_URL

# --- Redis ----------------------------------------------------------------------------------
if [ -z "${REDIS_URL:-}" ]; then
  command -v redis-server >/dev/null || die "redis-server is not installed (make services), or set REDIS_URL"
  mkdir -p "$STATE/redis"
  chmod 700 "$STATE/redis"
  if [ ! -s "$STATE/redis_password" ]; then
    (umask 077; "$PYTHON" -c 'import secrets; print(secrets.token_hex(32))' >"$STATE/redis_password")
  fi
  REDIS_PASSWORD=$(cat "$STATE/redis_password")
  # The password goes in a config file (0600), not on redis-server's command line.
  (umask 077; cat >"$STATE/redis/redis.conf" <<EOF
port $REDIS_PORT
bind 127.0.0.1
protected-mode yes
requirepass $REDIS_PASSWORD
dir $STATE/redis
save ""
appendonly no
loglevel warning
EOF
  )
  say "starting Redis on 127.0.0.1:$REDIS_PORT (password in .cluster/redis_password)"
  redis-server "$STATE/redis/redis.conf" >"$LOGS/redis.log" 2>&1 &
  PIDS+=($!)
  wait_port 127.0.0.1 "$REDIS_PORT" redis-server "$!"
  REDIS_URL="redis://:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT/0"
fi
export REDIS_URL

# --- one secret for every process -----------------------------------------------------------
if [ -z "${CRESCENT_SECRET_KEY:-}" ]; then
  if [ ! -s "$STATE/secret_key" ]; then
    (umask 077; "$PYTHON" -c 'import secrets; print(secrets.token_urlsafe(48))' >"$STATE/secret_key")
  fi
  CRESCENT_SECRET_KEY=$(cat "$STATE/secret_key")
fi
export CRESCENT_SECRET_KEY

say "migrating the database"
"$PYTHON" -c 'import os; from backend.db import run_migrations; run_migrations(os.environ["DATABASE_URL"])'

# --- the server processes -------------------------------------------------------------------
for spec in "a:$PORT_A" "b:$PORT_B"; do
  name=${spec%%:*}; port=${spec#*:}
  say "starting server $name on 127.0.0.1:$port (log: .cluster/logs/$name.log)"
  CRESCENT_INSTANCE=$name HOST=127.0.0.1 PORT=$port "$PYTHON" -m web serve >"$LOGS/$name.log" 2>&1 &
  PIDS+=($!)
done

# --- the router -----------------------------------------------------------------------------
say "starting HAProxy on $HOST:$PORT (status: http://127.0.0.1:$STATS_PORT/stats)"
CRESCENT_PROXY_BIND="$HOST:$PORT" CRESCENT_SERVER_A="127.0.0.1:$PORT_A" CRESCENT_SERVER_B="127.0.0.1:$PORT_B" \
  CRESCENT_PROXY_STATS_BIND="127.0.0.1:$STATS_PORT" \
  haproxy -db -f "$ROOT/deploy/haproxy.cfg" >"$LOGS/haproxy.log" 2>&1 &
HAPROXY=$!
PIDS+=($HAPROXY)
wait_port "$HOST" "$PORT" haproxy "$HAPROXY"

URL_HOST=$HOST; case $URL_HOST in *:*) URL_HOST="[$URL_HOST]";; esac
say "Crescent: http://$URL_HOST:$PORT (the models load in each process; Ctrl-C stops everything)"
for spec in "a:$PORT_A" "b:$PORT_B"; do
  name=${spec%%:*}; port=${spec#*:}
  ( for i in $(seq 1 3000); do
      if "$PYTHON" - "$port" 2>/dev/null <<'EOF'
import sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/healthz", timeout=2) as r:
    sys.exit(0 if r.status == 200 else 1)
EOF
      then echo "==> server $name ready"; exit 0; fi
      sleep 1
    done ) &
  PIDS+=($!)
done

# Until Ctrl-C, or until the router exits. A server that dies is not restarted here: the router
# moves its users to the other (run it again by hand from its log's command, or restart all).
wait "$HAPROXY" || true
die "haproxy exited (see $LOGS/haproxy.log)"

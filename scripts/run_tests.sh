#!/bin/sh
# The whole suite (make test), on SQLite and on PostgreSQL. $1: the virtual environment's python.
#
# Unless the caller set TEST_DATABASE_URL, a throwaway PostgreSQL cluster (Debian's
# postgresql package, `make services`) is made in a temporary directory for this run: fsync
# off, UTF-8, no TCP (its socket lies in that directory, so no port can clash), trust
# authentication for the `postgres` role. As root, initdb and the server run as the `postgres`
# user (initdb refuses root). The cluster is stopped and removed on exit; the exit status is
# pytest's. Extra arguments go to pytest.
set -eu

PYTHON=$1
shift

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  exec "$PYTHON" -m pytest -q "$@"
fi

BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo "run_tests.sh: PostgreSQL is not installed (make services installs it)" >&2
  exit 1
fi

PGTMP=$(mktemp -d /tmp/crescent-pg.XXXXXX)
PORT=5432  # names the socket file only (listen_addresses is empty)
if [ "$(id -u)" = 0 ]; then
  chown postgres "$PGTMP"
  AS_PG="runuser -u postgres --"
else
  AS_PG=""
fi

cleanup() {
  $AS_PG "$BIN/pg_ctl" -D "$PGTMP/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PGTMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

$AS_PG "$BIN/initdb" -D "$PGTMP/data" -A trust -U postgres -E UTF8 --no-locale >"$PGTMP/initdb.log" 2>&1 || {
  cat "$PGTMP/initdb.log" >&2
  exit 1
}
if ! $AS_PG "$BIN/pg_ctl" -D "$PGTMP/data" -w -l "$PGTMP/server.log" \
    -o "-p $PORT -k $PGTMP -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null; then
  cat "$PGTMP/server.log" >&2
  exit 1
fi

TEST_DATABASE_URL="postgresql://postgres@/postgres?host=$PGTMP&port=$PORT"
export TEST_DATABASE_URL
echo "==> PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') for the tests: $TEST_DATABASE_URL"

status=0
"$PYTHON" -m pytest -q "$@" || status=$?
exit "$status"

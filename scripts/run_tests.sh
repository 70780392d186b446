#!/bin/sh
# The whole suite (make test), on SQLite and on PostgreSQL. $1: the virtual environment's python.
#
# Unless the caller set TEST_DATABASE_URL, a throwaway PostgreSQL cluster (Debian's
# postgresql package, `make services`) is made in a temporary directory for this run: fsync
# off, UTF-8, no TCP (its socket lies in that directory, so no port can clash), trust
# authentication for the `postgres` role. As root, initdb and the server run as the `postgres`
# user (initdb refuses root). The cluster is stopped and removed on exit. Extra arguments go to
# pytest. Without extra arguments the browser tests whose server work differs by database
# (E2E_ON_POSTGRESQL) then run a second time with the server on PostgreSQL
# (CRESCENT_E2E_DATABASE_URL; the first run's server uses SQLite); the exit status is the
# first failing run's.
set -eu

PYTHON=$1
shift

# Search (full text), documents (BM25, ingestion), the message tree and the chat round trip;
# the rest of e2e/ (layout, rendering, theme) does the same database work as these. All of
# e2e/ on PostgreSQL: CRESCENT_E2E_DATABASE_URL=... pytest e2e (about 6 more minutes).
E2E_ON_POSTGRESQL="e2e/test_conversation_management.py e2e/test_documents.py e2e/test_message_actions.py e2e/test_chat.py"

run_suite() {
  status=0
  if [ "$#" -eq 0 ]; then  # the whole suite: list the slowest tests, to keep CI's time in view
    "$PYTHON" -m pytest -q --durations=25 || status=$?
  else
    "$PYTHON" -m pytest -q "$@" || status=$?
  fi
  if [ "$#" -eq 0 ]; then
    echo "==> the browser tests whose server work differs by database, again on PostgreSQL"
    e2e_status=0
    CRESCENT_E2E_DATABASE_URL=$TEST_DATABASE_URL "$PYTHON" -m pytest -q -p no:cacheprovider $E2E_ON_POSTGRESQL \
      || e2e_status=$?
    [ "$status" -ne 0 ] || status=$e2e_status
  fi
  return "$status"
}

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  run_suite "$@"
  exit $?
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
run_suite "$@" || status=$?
exit "$status"

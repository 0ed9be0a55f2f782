#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for CI and local runs, from Debian's
# postgresql package (installed here if missing).
#
#   source .ci/pg-cluster.sh; pg_cluster_start   # sets PG_ADMIN_URL, PG_DIR
#   ...                                           # stopped and removed at exit
#
# PostgreSQL refuses to run as root, so the cluster belongs to the postgres
# user (runuser) when this runs as root. It listens on 127.0.0.1 only, on a
# free port, with trust authentication for local connections and fsync off
# (a test cluster: the durability under test is tableemu's, through
# PostgreSQL's transactions, not the disk's).

pg_install() {
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then return 0; fi
  echo "== apt-get install postgresql"
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1; }

# pg_as runs a command as the cluster's owner.
pg_as() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_cluster_start() {
  pg_install
  local bin; bin=$(pg_bin)
  PG_DIR=$(mktemp -d /tmp/tableemu-pg.XXXXXX)
  chmod 755 "$PG_DIR"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$PG_DIR"; fi
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  pg_as "$bin/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  pg_as "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$PG_DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" >/dev/null
  PG_PORT=$port
  PG_ADMIN_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  export PG_DIR PG_PORT PG_ADMIN_URL
  trap pg_cluster_stop EXIT
  echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($PG_DIR)"
}

pg_cluster_stop() {
  [ -n "${PG_DIR:-}" ] || return 0
  pg_as "$(pg_bin)/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
  PG_DIR=
}

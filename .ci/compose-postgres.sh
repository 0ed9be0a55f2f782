#!/usr/bin/env bash
# docker/compose.postgres.yaml, run as processes (no container engine runs
# here): PostgreSQL with the compose file's user, password and database; two
# tableemu instances with the image's entrypoint flags and the compose
# file's command line (the host "postgres" becomes 127.0.0.1); nginx with
# docker/postgres/nginx.conf (installed from Debian if missing; the
# upstream names become the instances' ports). Then the example app and part
# of the Go conformance suite go through the balancer, and both instances
# must have served requests.
# Usage: bash .ci/compose-postgres.sh
set -euo pipefail
cd "$(dirname "$0")/.."
compose=docker/compose.postgres.yaml
# shellcheck source=.ci/pg-cluster.sh
source .ci/pg-cluster.sh
pg_cluster_start
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
  pg_cluster_stop
}
trap cleanup EXIT

if ! command -v nginx >/dev/null && ! [ -x /usr/sbin/nginx ]; then
  echo "== apt-get install nginx-light"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
fi
nginx=$(command -v nginx || echo /usr/sbin/nginx)

field() { sed -n "s/^ *$1: *//p" "$compose" | head -1; }
user=$(field POSTGRES_USER) password=$(field POSTGRES_PASSWORD | sed 's/ *#.*//') db=$(field POSTGRES_DB)
psql -q -X "$PG_ADMIN_URL" -c "CREATE ROLE \"$user\" LOGIN PASSWORD '$password'" -c "CREATE DATABASE \"$db\" OWNER \"$user\"" >/dev/null
# The compose file's command line, a JSON array on one line.
cmd_json=$(sed -n 's/^ *command: *\(\[.*\]\).*/\1/p' "$compose" | head -1)
mapfile -t cmd < <(python3 -c 'import json,sys; print("\n".join(json.loads(sys.argv[1])))' "$cmd_json")
for i in "${!cmd[@]}"; do cmd[$i]=${cmd[$i]//@postgres:5432/@127.0.0.1:$PG_PORT}; done
echo "the instances run: tableemu --tableHost 127.0.0.1 --tablePort PORT --location DIR ${cmd[*]//$password/xxxxx}"

bin=$work/tableemu
CGO_ENABLED=0 go build -o "$bin" ./cmd/tableemu
ports=()
for n in 1 2; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$work/data$n"
  "$bin" --tableHost 127.0.0.1 --tablePort "$port" --location "$work/data$n" "${cmd[@]}" >"$work/tableemu-$n.log" 2>&1 &
  pids+=($!)
  ports+=("$port")
done
for n in 1 2; do
  for _ in $(seq 100); do grep -q "successfully listening" "$work/tableemu-$n.log" && break; sleep 0.1; done
  grep -q "successfully listening" "$work/tableemu-$n.log" || { cat "$work/tableemu-$n.log"; echo "instance $n did not start"; exit 1; }
  if grep -q "$password" "$work/tableemu-$n.log"; then echo "instance $n logged the database password"; exit 1; fi
done
grep "serves Azure Table storage" "$work/tableemu-1.log"

lb=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed -e "s/tableemu-1:10002/127.0.0.1:${ports[0]}/" -e "s/tableemu-2:10002/127.0.0.1:${ports[1]}/" \
  -e "s/listen 10002;/listen 127.0.0.1:$lb;/" docker/postgres/nginx.conf >"$work/nginx.conf"
grep -q "127.0.0.1:${ports[1]}" "$work/nginx.conf" || { echo "docker/postgres/nginx.conf: no upstream tableemu-2:10002"; exit 1; }
"$nginx" -p "$work" -c "$work/nginx.conf" -g "pid $work/nginx.pid; error_log $work/nginx-error.log;"
for _ in $(seq 50); do [ -f "$work/nginx.pid" ] && break; sleep 0.1; done

cs="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=http://127.0.0.1:$lb/devstoreaccount1;"
AZURE_TABLES_CONNECTION_STRING=$cs go run ./docker/example-app
# Entities, queries, batches and SAS through the balancer, two instances
# answering in turn.
TABLEEMU_TEST_CONNECTION_STRING=$cs go test -count=1 -run 'TestEntity|TestQuery|TestBatch|TestServiceSAS|TestStoredAccessPolicy' ./conformance/
for n in 1 2; do
  # Access log lines: TIME METHOD URI STATUS OPERATION CODE DURATION.
  served=$(grep -cE '^[^ ]+ (GET|POST|PUT|PATCH|MERGE|DELETE|OPTIONS|HEAD) /' "$work/tableemu-$n.log" || true)
  echo "instance $n served $served requests"
  [ "$served" -gt 0 ] || { echo "instance $n served nothing: the balancer does not spread the load"; exit 1; }
done
echo "compose.postgres.yaml: two instances on one database behind nginx serve the SDKs"

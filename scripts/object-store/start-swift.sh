#!/usr/bin/env bash
# A one-node OpenStack Swift with its S3 layer (s3api + tempauth) for tests and CI, from Debian's
# packages (apt-get install swift swift-proxy swift-account swift-container swift-object memcached).
#
#   scripts/object-store/start-swift.sh DIR [PORT]   start (or find running) in DIR, S3 on 127.0.0.1:PORT
#   scripts/object-store/start-swift.sh --stop DIR   stop the servers started in DIR
#
# Everything lives in DIR: configuration, rings, one device (DIR/devices/d1; its filesystem must
# take user xattrs), pid files and logs. The account, container and object servers listen on
# PORT+1..PORT+3 and memcached (when installed) on PORT+4, all on 127.0.0.1. Idempotent: a second
# start with the servers up only prints the settings. On success it prints, one per line:
#   AWS_ENDPOINT_URL=http://127.0.0.1:PORT  AWS_REGION=us-east-1
#   AWS_ACCESS_KEY_ID=gex:tester  AWS_SECRET_ACCESS_KEY=…
set -euo pipefail

usage() {
  echo "usage: $0 DIR [PORT] | $0 --stop DIR" >&2
  exit 2
}

stop=false
if [ "${1:-}" = "--stop" ]; then
  stop=true
  shift
fi
[ $# -ge 1 ] || usage
dir=$1
port=${2:-${GEX_SWIFT_PORT:-8089}}
case $port in '' | *[!0-9]*) usage ;; esac
[ "$port" -ge 1024 ] && [ "$port" -le 65530 ] || {
  echo "error: PORT must be 1024..65530, got $port" >&2
  exit 2
}

servers=(account container object proxy)
# Debian's scripts run /usr/bin/python3, which has python3-swift (the python3 on PATH may be another)
python=/usr/bin/python3

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stops the servers of DIR and waits until they are gone (5 s, then SIGKILL): their ports are free after
stop_all() {
  local pidfile pids=() pid
  for pidfile in "$dir"/run/*.pid; do
    [ -f "$pidfile" ] || continue
    if alive "$pidfile"; then
      pid=$(cat "$pidfile")
      kill "$pid" 2>/dev/null && pids+=("$pid")
    fi
    rm -f "$pidfile"
  done
  for _ in $(seq 50); do
    local left=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && left=1; done
    [ $left = 0 ] && return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}

if $stop; then
  [ -d "$dir/run" ] && stop_all
  exit 0
fi

for binary in swift-ring-builder swift-proxy-server swift-account-server swift-container-server swift-object-server; do
  if ! command -v "$binary" >/dev/null 2>&1; then
    echo "error: $binary is not installed (Debian: apt-get install -y --no-install-recommends swift swift-proxy swift-account swift-container swift-object memcached)" >&2
    exit 3
  fi
done
if ! $python -c 'import swift.common.middleware.s3api' 2>/dev/null; then
  echo "error: $python has no swift s3api middleware (Debian: apt-get install python3-swift)" >&2
  exit 3
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mkdir -p "$dir/etc" "$dir/devices/d1" "$dir/run" "$dir/log" "$dir/cache"

key_file="$dir/etc/tester.key"
[ -s "$key_file" ] || (umask 077 && $python -c 'import secrets; print(secrets.token_hex(16))' >"$key_file")
key=$(cat "$key_file")
endpoint="http://127.0.0.1:$port"

print_settings() {
  echo "AWS_ENDPOINT_URL=$endpoint"
  echo "AWS_REGION=us-east-1"
  echo "AWS_ACCESS_KEY_ID=gex:tester"
  echo "AWS_SECRET_ACCESS_KEY=$key"
}

healthy() { curl -fsS -m 2 "$endpoint/healthcheck" >/dev/null 2>&1; }

all_alive() {
  local s
  for s in "${servers[@]}"; do alive "$dir/run/$s.pid" || return 1; done
}

if all_alive && healthy; then
  print_settings
  exit 0
fi
stop_all

# another server on one of the ports would answer in place of this one
for p in $(seq "$port" $((port + 4))); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "error: 127.0.0.1:$p is in use by another process (another Swift?); choose another PORT (it uses PORT..PORT+4)" >&2
    exit 1
  fi
done

if ! $python -c "import os,sys; p=sys.argv[1]+'/.xattr-probe'; open(p,'w').close(); os.setxattr(p,'user.probe',b'1'); os.remove(p)" "$dir/devices/d1" 2>/dev/null; then
  echo "error: the filesystem of $dir does not take user xattrs, which Swift's object server needs; use a folder on ext4, xfs or tmpfs" >&2
  exit 3
fi

# the hash path prefix and suffix are fixed per DIR: the rings and stored objects depend on them
[ -s "$dir/etc/hash" ] || $python -c 'import secrets; print(secrets.token_hex(8))' >"$dir/etc/hash"
hash=$(cat "$dir/etc/hash")

cat >"$dir/etc/swift.conf" <<EOF
[swift-hash]
swift_hash_path_suffix = $hash
swift_hash_path_prefix = gex
[storage-policy:0]
name = Policy-0
default = yes
EOF

common() {
  cat <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $1
workers = 0
user = $(id -un)
swift_dir = $dir/etc
devices = $dir/devices
mount_check = false
log_level = WARNING
log_address = $dir/run/no-syslog
log_facility = LOG_LOCAL0
EOF
}

for s in account container object; do
  case $s in account) p=$((port + 1)) ;; container) p=$((port + 2)) ;; *) p=$((port + 3)) ;; esac
  {
    common "$p"
    echo "[pipeline:main]"
    echo "pipeline = $s-server"
    echo "[app:$s-server]"
    echo "use = egg:swift#$s"
  } >"$dir/etc/$s-server.conf"
done

memcache_port=$((port + 4))
{
  common "$port"
  cat <<EOF
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk s3api tempauth copy slo dlo proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:$memcache_port
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:bulk]
use = egg:swift#bulk
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
[filter:tempauth]
use = egg:swift#tempauth
user_gex_tester = $key .admin
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
EOF
} >"$dir/etc/proxy-server.conf"

# rings: one device, one replica, partition power 6, built in one Python process (well under a
# second) and kept while PORT stays the same
if [ "$(cat "$dir/etc/rings.port" 2>/dev/null)" != "$port" ] || [ ! -s "$dir/etc/object.ring.gz" ]; then
  rm -f "$dir"/etc/*.builder "$dir"/etc/*.ring.gz "$dir/etc/rings.port"
  $python - "$dir/etc" "$port" <<'PY'
import sys
from swift.common.ring import RingBuilder

etc, port = sys.argv[1], int(sys.argv[2])
for offset, name in enumerate(('account', 'container', 'object'), start=1):
    builder = RingBuilder(6, 1, 1)
    builder.add_dev({'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': port + offset,
                     'device': 'd1', 'weight': 100, 'meta': ''})
    builder.rebalance()
    builder.get_ring().save('%s/%s.ring.gz' % (etc, name))
    builder.save('%s/%s.builder' % (etc, name))
PY
  echo "$port" >"$dir/etc/rings.port"
fi

if command -v memcached >/dev/null 2>&1; then
  memcached -l 127.0.0.1 -p "$memcache_port" -U 0 -m 16 -u "$(id -un)" >"$dir/log/memcached.log" 2>&1 &
  echo $! >"$dir/run/memcached.pid"
fi
for s in "${servers[@]}"; do
  nohup "swift-$s-server" "$dir/etc/$s-server.conf" >"$dir/log/$s.log" 2>&1 &
  echo $! >"$dir/run/$s.pid"
done

for _ in $(seq 100); do
  if healthy; then
    print_settings
    exit 0
  fi
  for s in "${servers[@]}"; do
    if ! alive "$dir/run/$s.pid"; then
      echo "error: swift-$s-server exited at start; its log ($dir/log/$s.log):" >&2
      tail -n 20 "$dir/log/$s.log" >&2
      stop_all
      exit 1
    fi
  done
  sleep 0.1
done
echo "error: Swift's proxy did not answer on $endpoint within 10 s; logs in $dir/log" >&2
stop_all
exit 1

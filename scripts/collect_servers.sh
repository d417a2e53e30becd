#!/usr/bin/env bash
# The servers `burstlab collect` exports to, for its integration test
# (tests/python/collect/test_collect_servers.py): Prometheus and InfluxDB 1.x from Debian's
# packages (bookworm: prometheus 2.42, influxdb 1.6.7). Only installed here; the test starts its
# own instances on free ports with throw-away data directories, and never touches a running
# service. Installs only as root with apt-get; otherwise says what is missing.
set -euo pipefail

missing=()
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v influxd >/dev/null 2>&1 || missing+=(influxdb)
[ "${#missing[@]}" = 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "collect_servers: installing ${missing[*]} with apt-get" >&2
    # Debian's maintainer scripts would start the services; a policy-rc.d of 101 keeps them off
    # (the test runs its own), and is removed after.
    policy=/usr/sbin/policy-rc.d
    own_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
    fi
    trap '[ "$own_policy" = 1 ] && rm -f "$policy"' EXIT
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
        || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
             --no-install-recommends "${missing[@]}" >/dev/null; }
else
    echo "collect_servers: ${missing[*]} not installed; as root: apt-get install ${missing[*]}" >&2
    exit 1
fi

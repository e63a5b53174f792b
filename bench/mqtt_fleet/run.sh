#!/usr/bin/env bash
# The MQTT fleet benchmark (scripts/bench runs it): bench/mqtt_fleet/fleet.mjs with
# EMCP_BENCH_FLEET_DEVICES emcp-sensors processes (200 by default) on one Mosquitto, once with
# Mosquitto's default set_tcp_nodelay false (--broker-nagle) and once with the setting the fleet
# is measured with (TCP_NODELAY on the broker's sockets too).
#   bench/mqtt_fleet/run.sh BIN_DIR RESULTS_DIR
# BIN_DIR holds emcp-sensors; Node and tests/mcp's npm packages (scripts/bench installs them) run
# the program. Writes mqtt-fleet.md (the Markdown printed, which scripts/bench puts into
# bench/README.md), mqtt-fleet.json and mqtt-fleet-nagle.json (the figures; docs/mqtt.md's come
# from the first) and mqtt-fleet-busy.txt (how busy the machine was meanwhile: bench/lib.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
bin=$1 results=$2
mkdir -p "$results"
devices=${EMCP_BENCH_FLEET_DEVICES:-200}
# Each device and each session is a descriptor at the broker and one here (a pipe, a socket):
# raise the soft limit of open files to the hard one when it is below what the fleet needs
# (fleet.mjs checks the broker's and its own and refuses to start short of it).
need=$((2 * devices + 64))
soft=$(ulimit -n)
if [[ $soft != unlimited ]] && ((soft < need)); then ulimit -n "$(ulimit -Hn)"; fi
fleet=(node "$here/fleet.mjs" --sensors "$bin/emcp-sensors" --devices "$devices")
echo "mqtt fleet: $devices devices, Mosquitto's default Nagle first..." >&2
busy_start
"${fleet[@]}" --broker-nagle --json "$results/mqtt-fleet-nagle.json" >/dev/null
echo "mqtt fleet: $devices devices..." >&2
"${fleet[@]}" --json "$results/mqtt-fleet.json" --baseline "$results/mqtt-fleet-nagle.json" | tee "$results/mqtt-fleet.md"
busy_end "$results/mqtt-fleet-busy.txt"

#!/bin/sh
# Seeds for fuzz_mqtt_reader, written as hex here (no binary files kept): what a server sends a
# client, packet by packet as chapter 3 of MQTT 5.0 lays them out (those of
# tests/unit/mqtt_packet_test.cpp), and a whole session. Each seed starts with the target's three
# settings bytes: the head buffer (6: 1024 bytes), the Maximum Packet Size (0: none) and the
# seed of its splits.
# Usage: make_mqtt_seeds.sh OUT_DIR
set -eu
out=$1
rm -rf "$out"
mkdir -p "$out"

# hex "20 03 'ab'": the bytes of hex pairs and 'quoted ASCII' (no spaces inside quotes).
hex() {
  for t in $1; do
    case $t in
      \'*) t=${t#\'}; printf '%s' "${t%\'}" ;;
      *) printf "\\$(printf '%03o' "0x$t")" ;;
    esac
  done
}
seed() {  # seed NAME HEX...: the settings bytes 06 00 2a, then the packets
  name=$1
  shift
  { hex "06 00 2a"; for p in "$@"; do hex "$p"; done; } > "$out/$name"
}

CONNACK="20 03 00 00 00"
CONNACK_PROPS="20 43 01 00 40 21 00 14 27 00 01 00 00 24 01 25 00 28 00 13 00 1e 12 00 04 'auto' 22 00 0a 1f 00 02 'ok' 26 00 01 'a' 00 01 '1' 26 00 01 'a' 00 01 '2' 26 00 01 'b' 00 01 '3' 11 00 00 00 3c 1c 00 03 'srv'"
PUBLISH="32 0a 00 03 'a/b' 00 0a 00 'hi'"
PUBLISH_EMPTY="31 05 00 02 't/' 00"
PUBLISH_PROPS="3b 39 00 05 'dev/1' 12 34 27 01 01 02 00 00 00 3c 03 00 04 'json' 08 00 05 'reply' 09 00 02 ab cd 0b 05 0b 80 01 26 00 01 'k' 00 01 'v' 'payload!'"
PUBACK="40 02 00 0a"
PUBACK_CODE="40 03 00 0b 10"
PUBACK_PROPS="40 0a 00 0c 97 06 1f 00 03 'bad'"
SUBACK="90 05 00 01 00 01 80"
UNSUBACK="b0 04 00 02 00 11"
PINGRESP="d0 00"
DISCONNECT="e0 00"
DISCONNECT_PROPS="e0 0d 9c 0b 1c 00 08 'host:883'"

seed connack "$CONNACK"
seed connack_props "$CONNACK_PROPS"
seed publish "$PUBLISH"
seed publish_empty "$PUBLISH_EMPTY"
seed publish_props "$PUBLISH_PROPS"
seed acks "$PUBACK" "$PUBACK_CODE" "$PUBACK_PROPS" "$SUBACK" "$UNSUBACK"
seed ping_disconnect "$PINGRESP" "$DISCONNECT" "$DISCONNECT_PROPS"
seed session "$CONNACK_PROPS" "$SUBACK" "$PUBLISH" "$PUBLISH_EMPTY" "$PUBACK" "$PUBLISH_PROPS" \
  "$PUBACK_PROPS" "$UNSUBACK" "$PINGRESP" "$DISCONNECT_PROPS"
# Near misses: a Topic Alias, a Remaining Length of four bytes, a head larger than a small buffer.
seed topic_alias "30 07 00 01 't' 03 23 00 01"
seed long_length "30 ff ff ff 7f 00 01 't' 00 'x'"
{ hex "03 03 07"; hex "$PUBLISH_PROPS"; } > "$out/small_head"
echo "mqtt seeds: $(ls "$out" | wc -l) in $out"

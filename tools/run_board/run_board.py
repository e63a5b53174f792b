#!/usr/bin/env python3
"""Runs an emcp firmware image on an emulated board (QEMU), for people and for the tests.

    scripts/run-board BOARD APP [--http PORT] [--tls-cert FILE --tls-key FILE]
                      [--mqtt URL [--mqtt-name NAME] [--mqtt-id ID]
                       [--mqtt-ca FILE [--mqtt-cert FILE --mqtt-key FILE] [--mqtt-tls-name NAME]]]
                      [--image ELF] [--wait SECONDS]

The board's UART is this program's stdin/stdout (an MCP client can spawn it, through
emcp-bridge: the firmware's first line is a banner, not JSON). With --http, 127.0.0.1:PORT is
forwarded to the board's port 80 over QEMU's user network (PORT 0: a free port), and once the
board answers HTTP this prints "... serving MCP on http://127.0.0.1:PORT/mcp" on stderr.
It runs until SIGTERM/SIGINT or the end of its input, and always stops QEMU.

With --tls-cert and --tls-key (PEM files) the board serves HTTPS: the TLS image of APP is run
(emcp-APP-tls-BOARD) and the certificate and key are provisioned into the board's credentials
region (board/credentials.h) with QEMU's loader, never built into the image; it then prints
"serving MCP on https://...".

With --mqtt mqtt://HOST:PORT the board serves MCP over MQTT (docs/mqtt.md) through that broker
(the image emcp-APP-mqtt-BOARD, or emcp-APP-mqtt-net-BOARD with --http): the broker's address
as the board reaches it over QEMU's user network (127.0.0.1 and localhost become 10.0.2.2, the
host's loopback as the guest sees it; another IPv4 address stays; the board resolves no names),
the server-name (--mqtt-name, default devices/APP/BOARD) and the server-id (--mqtt-id; default:
the firmware's own, from its random source) are provisioned into the board's credentials region
(board/credentials.h), as TLS's certificate is. Once the board's presence appears on the broker
($mcp-server/presence/{server-id}/{server-name}, read by a small MQTT 3.1.1 subscriber here),
this prints "... serving MCP over MQTT through 127.0.0.1:PORT as server id ID, name NAME".
With --mqtt mqtts://HOST:PORT --mqtt-ca FILE the board dials the broker over TLS (the image
emcp-APP-mqtt-tls-BOARD, or emcp-APP-mqtt-tls-net-BOARD with --http): the CA certificates (PEM) the broker's certificate must lead to, and
with --mqtt-cert and --mqtt-key a client certificate, go into the credentials region too; when
HOST is a name (localhost) the board dials its address and checks the certificate against the
name; to an IPv4 address, --mqtt-tls-name NAME gives the name the certificate carries. The subscriber here then reads the presence over TLS too, and the line says "over MQTT
(TLS) through localhost:PORT".

Authorization (with TLS): --auth-token TOKEN (repeatable) and --jwt-key PUB.pem --issuer URL
[--require-at-jwt] [--audience URI] are provisioned into the same region (board/credentials.h entries); the
audience defaults to https://127.0.0.1:PORT/mcp; with a JWT key the board's wall clock comes
from the host through semihosting (QEMU's semihosting is switched on for it).

With EMCP_PCAP=PREFIX in the environment, QEMU writes the board's network traffic (the frames
its NIC sends and receives) to PREFIX-PORT.pcap, PORT the forwarded one: what a test's failure
over HTTP looked like on the wire (docs/http.md, "On a board").

The image is built first unless --image names one: `cmake --build build/BOARD --target
emcp-APP[-net]-BOARD` (with --http the network image of APP when there is one), which builds
nothing when the image is current; build output goes to stderr, never to the UART's stdout.
"""
import argparse
import os
import re
import signal
import socket
import ssl
import subprocess
import tempfile
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Board -> (QEMU machine, NIC model or None, credentials region address or None).
BOARDS = {
    "mps2-an385": ("mps2-an385", "lan9118", 0x00380000),
    "stm32f4": ("netduinoplus2", None, None),
    "microbit": ("microbit", None, None),
    "hifive1": ("sifive_e", None, None),
    "lx106-sim": ("sim", None, None),
}
# The QEMU program that emulates a machine: qemu-system-arm unless this table says otherwise.
QEMU_PROGRAMS = {"sifive_e": "qemu-system-riscv32", "sim": "qemu-system-xtensa"}
# What a machine needs besides -M (the Xtensa sim machine: the lx106 core, and semihosting, its
# console: boards/lx106-sim).
QEMU_MACHINE_ARGS = {"sim": ["-cpu", "lx106", "-semihosting"]}
# The UART's -serial: stdio (QEMU's standard input and output), but on the sim machine, whose
# semihosting console reads and writes them itself without a serial chardev (boards/lx106-sim).
QEMU_CONSOLE = {"sim": "none"}
CREDENTIALS_SIZE = 16384


def say(*parts):
    sys.stderr.write("run-board: " + "".join(str(p) for p in parts) + "\n")
    sys.stderr.flush()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# board/credentials.h's entry types.
ENTRY_STATIC_TOKEN, ENTRY_JWT_KEY, ENTRY_ISSUER, ENTRY_AUDIENCE, ENTRY_CLOCK, ENTRY_JWT_TYPE = 1, 2, 3, 4, 5, 6
ENTRY_MQTT_BROKER, ENTRY_MQTT_NAME, ENTRY_MQTT_ID = 7, 8, 9
ENTRY_MQTT_CA, ENTRY_MQTT_CERT, ENTRY_MQTT_KEY, ENTRY_MQTT_TLS_NAME = 10, 11, 12, 13


def credentials_blob(cert_path, key_path, entries=()):
    """The credentials region's bytes (board/credentials.h): magic, lengths, PEM texts with NULs
    (none without a certificate: both lengths 0), then the entries (type, text)."""
    cert = key = b""
    if cert_path is not None:
        with open(cert_path, "rb") as f:
            cert = f.read() + b"\0"
        with open(key_path, "rb") as f:
            key = f.read() + b"\0"
    blob = b"EMCPCRED" + len(cert).to_bytes(4, "little") + len(key).to_bytes(4, "little") + cert + key
    if entries:
        blob += b"AUTH" + len(entries).to_bytes(4, "little")
        for kind, text in entries:
            data = text.encode() + b"\0"
            blob += kind.to_bytes(4, "little") + len(data).to_bytes(4, "little") + data
    if len(blob) > CREDENTIALS_SIZE:
        say(f"the certificate and key take {len(blob)} bytes; the credentials region holds {CREDENTIALS_SIZE}")
        sys.exit(2)
    return blob


def is_ipv4(host):
    return re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", host) is not None


def board_broker(url):
    """The broker as the board dials it: (board URL, host port, TLS, the name the host gave) from
    the host's mqtt://HOST:PORT or mqtts://HOST:PORT; None when it is not one the board can reach
    (a name other than localhost, IPv6)."""
    m = re.fullmatch(r"(mqtts?)://([^:/\[\]]+)(?::(\d+))?/?", url)
    if not m:
        return None
    tls = m.group(1) == "mqtts"
    given, port = m.group(2), int(m.group(3) or (8883 if tls else 1883))
    host = "10.0.2.2" if given in ("127.0.0.1", "localhost") else given  # QEMU's user network: the host's loopback
    if not is_ipv4(host) or not 0 < port < 65536:
        return None
    return f"{m.group(1)}://{host}:{port}", port, tls, given


def mqtt_packet(kind, body):
    """An MQTT packet: the fixed header (type and flags `kind`, Remaining Length) and `body`."""
    n, length = len(body), b""
    while True:
        byte, n = n % 128, n // 128
        length += bytes([byte | (0x80 if n else 0)])
        if not n:
            return bytes([kind]) + length + body


def mqtt_string(text):
    data = text.encode()
    return len(data).to_bytes(2, "big") + data


def wait_presence(port, name, timeout, stop, tls=None):
    """The server-id of the first MCP server whose presence (a retained, non-empty message on
    $mcp-server/presence/{server-id}/{name}) the broker on 127.0.0.1:port has, or gets within
    `timeout` seconds; None otherwise. MQTT 3.1.1 (a broker of 5.0 serves it too): CONNECT,
    SUBSCRIBE at QoS 0, PUBLISHes read until one matches, DISCONNECT. `tls`: (CA file, the name
    the broker's certificate carries, client certificate file or None, its key) to speak TLS,
    the certificate checked, the board's client certificate presented when it has one."""
    deadline = time.monotonic() + timeout
    try:
        context = None
        if tls is not None:
            context = ssl.create_default_context(cafile=tls[0])
            if tls[2] is not None:
                context.load_cert_chain(tls[2], tls[3])
    except (OSError, ssl.SSLError) as e:
        say(f"the TLS settings for the broker do not load: {e}")
        return None
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            if context is not None:
                raw = context.wrap_socket(raw, server_hostname=tls[1])
        except (OSError, ssl.SSLError):
            raw.close()
            raise
        with raw as s:
            s.sendall(mqtt_packet(0x10, mqtt_string("MQTT") + bytes([4, 0x02, 0, 60]) + mqtt_string(f"run-board-{os.getpid()}")))
            s.sendall(mqtt_packet(0x82, (1).to_bytes(2, "big") + mqtt_string(f"$mcp-server/presence/+/{name}") + b"\0"))
            buf = b""
            while not stop.is_set() and time.monotonic() < deadline:
                s.settimeout(max(0.2, min(1.0, deadline - time.monotonic())))
                try:
                    data = s.recv(65536)
                except socket.timeout:
                    continue
                if not data:
                    return None
                buf += data
                while len(buf) >= 2:  # whole packets only
                    length, shift, i = 0, 0, 1
                    while i < len(buf) and i <= 4:
                        length |= (buf[i] & 0x7F) << shift
                        shift += 7
                        i += 1
                        if not buf[i - 1] & 0x80:
                            break
                    else:
                        break
                    if len(buf) < i + length:
                        break
                    kind, body, buf = buf[0], buf[i:i + length], buf[i + length:]
                    if kind >> 4 != 3:  # CONNACK, SUBACK
                        continue
                    topic = body[2:2 + int.from_bytes(body[:2], "big")].decode("utf-8", "replace")
                    payload = body[2 + len(topic.encode()) + (2 if kind & 0x06 else 0):]
                    m = re.fullmatch(r"\$mcp-server/presence/([^/]+)/(.+)", topic)
                    if m and m.group(2) == name and payload:
                        s.sendall(b"\xe0\x00")
                        return m.group(1)
    except ssl.SSLError as e:
        say(f"the broker's TLS listener refused this host's watcher: {e}")
        return None
    except OSError:
        return None
    return None


def build(board, app, http, tls=False, mqtt=False, mqtt_tls=False):
    build_dir = os.path.join(ROOT, "build", board)
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        subprocess.run(["cmake", "--preset", board], cwd=ROOT, stdout=sys.stderr, check=True)
    targets = subprocess.run(["ninja", "-C", build_dir, "-t", "targets", "all"], capture_output=True, text=True,
                             check=True).stdout
    names = {line.split(":")[0] for line in targets.splitlines()}
    candidates = ([f"emcp-{app}-tls-{board}"] if tls else
                  [f"emcp-{app}-mqtt-tls-net-{board}" if http else f"emcp-{app}-mqtt-tls-{board}"] if mqtt_tls else
                  [f"emcp-{app}-mqtt-net-{board}" if http else f"emcp-{app}-mqtt-{board}"] if mqtt else
                  ([f"emcp-{app}-net-{board}"] if http else []) + [f"emcp-{app}-{board}"])
    target = next((t for t in candidates if f"bin/{t}.elf" in names or t in names), None)
    if target is None:
        say(f"no image {' or '.join(candidates)} in build/{board}")
        sys.exit(2)
    subprocess.run(["cmake", "--build", build_dir, "--target", target], cwd=ROOT, stdout=sys.stderr, check=True)
    return os.path.join(build_dir, "bin", target + ".elf")


# Waiting for the board, without leaving a connection behind. QEMU's user network accepts a
# forwarded connection on the host at once and only then sends its SYN to the board; while the
# board has no address yet that SYN is lost, and QEMU sends it again seconds later (6 s, then
# more), whether or not the host side is still there. A readiness probe given up meanwhile thus
# reached the board's port 80 seconds after it was ready: a connection nobody asked for, which
# took a slot while the tests' clients held them all (the idle keep-alive connection it took
# lost the request on its way: board_http_load's "socket hang up"). So the probes that may be
# given up go to a port nothing listens on (PROBE_PORT: the board answers RST once its stack has
# its address, and a late SYN gets only that); the one probe of port 80, after that, waits for
# its answer or its end.
PROBE_PORT = 9  # the discard port: no emcp firmware listens on it


def stack_answers(port):
    """True when the board's TCP stack answers a connection forwarded to its PROBE_PORT (with RST,
    which QEMU passes on as the end of the host's connection); False when nothing came within 1 s
    (or QEMU is not listening yet)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as s:
            return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except OSError:
        return False


def answers_http(port, tls, timeout):
    """True when something behind 127.0.0.1:port answers an HTTP(S) request with a status line
    within `timeout` seconds."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
            s = raw
            if tls:  # only whether it answers: the certificate is the client's business
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                s = ctx.wrap_socket(raw, server_hostname="localhost")
            s.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return s.recv(16).startswith(b"HTTP/1.")
    except (OSError, ssl.SSLError):
        return False


def main():
    ap = argparse.ArgumentParser(prog="scripts/run-board", description=__doc__.split("\n\n")[0])
    ap.add_argument("board", choices=sorted(BOARDS))
    ap.add_argument("app", help="the image's application: minimal, sensors, everything, netcheck")
    ap.add_argument("--http", type=int, metavar="PORT", help="forward 127.0.0.1:PORT to the board's port 80")
    ap.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this certificate chain (PEM) ...")
    ap.add_argument("--tls-key", metavar="FILE", help="... and this private key (PEM)")
    ap.add_argument("--auth-token", action="append", default=[], metavar="TOKEN",
                    help="require a bearer token; this one grants every scope (repeatable; with TLS)")
    ap.add_argument("--jwt-key", metavar="FILE", help="JWT access tokens signed with this public key (PEM)")
    ap.add_argument("--issuer", metavar="URL", help="the JWTs' issuer")
    ap.add_argument("--require-at-jwt", action="store_true", help="refuse JWTs whose header typ is not at+jwt (RFC 9068)")
    ap.add_argument("--audience", metavar="URI", help="the canonical URI (default https://127.0.0.1:PORT/mcp)")
    ap.add_argument("--mqtt", metavar="URL", help="serve MCP over MQTT through the broker at mqtt://HOST:PORT (as this host reaches it)")
    ap.add_argument("--mqtt-name", metavar="NAME", help="the server-name (default devices/APP/BOARD)")
    ap.add_argument("--mqtt-id", metavar="ID", help="the server-id (default: the firmware's, from its random source)")
    ap.add_argument("--mqtt-ca", metavar="FILE", help="mqtts://: the CA certificates (PEM) the broker's certificate must lead to")
    ap.add_argument("--mqtt-cert", metavar="FILE", help="mqtts://, optional: the board's client certificate (PEM) ...")
    ap.add_argument("--mqtt-key", metavar="FILE", help="... and its private key (PEM)")
    ap.add_argument("--mqtt-tls-name", metavar="NAME", help="mqtts:// to an IPv4 address: the name the broker's certificate "
                    "carries (the board checks that name; Mbed TLS 2.28 matches no IP address)")
    ap.add_argument("--image", help="an ELF image to run instead of building emcp-APP-BOARD")
    ap.add_argument("--wait", type=float, default=60.0, help="seconds to wait for HTTP (default 60)")
    a = ap.parse_args()
    machine, nic, cred_addr = BOARDS[a.board]
    tls = a.tls_cert is not None or a.tls_key is not None
    if tls and (a.tls_cert is None or a.tls_key is None or a.http is None):
        say("--tls-cert and --tls-key go together, with --http")
        return 2
    auth = bool(a.auth_token or a.jwt_key)
    if auth and not tls:
        say("--auth-token and --jwt-key need --tls-cert and --tls-key (tokens never travel in clear)")
        return 2
    if (a.jwt_key is None) != (a.issuer is None):
        say("--jwt-key and --issuer go together")
        return 2
    if a.require_at_jwt and a.jwt_key is None:
        say("--require-at-jwt needs --jwt-key")
        return 2
    if tls and cred_addr is None:
        say(f"{a.board} has no credentials region; TLS needs mps2-an385")
        return 2
    if a.http is not None and nic is None:
        say(f"{a.board} has no network interface in QEMU; --http needs mps2-an385")
        return 2
    mqtt = None
    if (a.mqtt_name or a.mqtt_id or a.mqtt_ca or a.mqtt_cert or a.mqtt_key or a.mqtt_tls_name) and not a.mqtt:
        say("--mqtt-name, --mqtt-id, --mqtt-ca, --mqtt-cert, --mqtt-key and --mqtt-tls-name need --mqtt URL")
        return 2
    if a.mqtt:
        mqtt = board_broker(a.mqtt)
        if mqtt is None:
            say(f"--mqtt needs mqtt://HOST[:PORT] or mqtts://HOST[:PORT] with HOST an IPv4 address or localhost (given: {a.mqtt})")
            return 2
        if mqtt[2] != (a.mqtt_ca is not None):
            say("mqtts:// needs --mqtt-ca FILE (the CAs the broker's certificate must lead to)" if mqtt[2]
                else "--mqtt-ca goes with an mqtts:// URL")
            return 2
        if (a.mqtt_cert is None) != (a.mqtt_key is None) or (a.mqtt_cert is not None and not mqtt[2]):
            say("--mqtt-cert and --mqtt-key go together, with mqtts://")
            return 2
        ipv4 = is_ipv4(mqtt[3])
        if a.mqtt_tls_name is not None and not (mqtt[2] and ipv4):
            say("--mqtt-tls-name goes with mqtts:// to an IPv4 address")
            return 2
        if mqtt[2] and ipv4 and a.mqtt_tls_name is None:
            say(f"mqtts://{mqtt[3]}: the board checks the broker's certificate against a DNS name (Mbed TLS 2.28 matches "
                "no IP address): give the name it carries with --mqtt-tls-name NAME (or use mqtts://localhost:PORT)")
            return 2
        if tls or nic is None or cred_addr is None:
            say("--mqtt needs a board with a network and a credentials region (mps2-an385), and no --tls-cert")
            return 2
    mqtt_name = a.mqtt_name or f"devices/{a.app}/{a.board}"
    net = a.http is not None or mqtt is not None
    if a.http is not None and not 0 <= a.http <= 65535:
        say("--http needs a port 0..65535")
        return 2
    image = a.image or build(a.board, a.app, a.http is not None, tls, mqtt is not None, mqtt is not None and mqtt[2])
    if not os.path.exists(image):
        say(f"no image {image}")
        return 2
    cmd = [QEMU_PROGRAMS.get(machine, "qemu-system-arm"), "-M", machine, *QEMU_MACHINE_ARGS.get(machine, []), "-display", "none", "-monitor", "none", "-serial", QEMU_CONSOLE.get(machine, "stdio"),
           "-kernel", image]
    port = None
    blob_dir = None
    if a.http is not None:
        port = a.http or free_port()
    if tls:
        entries = [(ENTRY_STATIC_TOKEN, t) for t in a.auth_token]
        if a.jwt_key:
            with open(a.jwt_key, encoding="ascii") as f:
                entries += [(ENTRY_JWT_KEY, f.read()), (ENTRY_ISSUER, a.issuer), (ENTRY_CLOCK, "semihosting")]
            if a.require_at_jwt:
                entries.append((ENTRY_JWT_TYPE, "at+jwt"))
            cmd += ["-semihosting-config", "enable=on,target=native"]
        if auth:
            entries.append((ENTRY_AUDIENCE, a.audience or f"https://127.0.0.1:{port}/mcp"))
    if mqtt is not None:
        entries = [(ENTRY_MQTT_BROKER, mqtt[0]), (ENTRY_MQTT_NAME, mqtt_name)]
        if a.mqtt_id:
            entries.append((ENTRY_MQTT_ID, a.mqtt_id))
        if mqtt[2]:
            for kind, path in ((ENTRY_MQTT_CA, a.mqtt_ca), (ENTRY_MQTT_CERT, a.mqtt_cert), (ENTRY_MQTT_KEY, a.mqtt_key)):
                if path is not None:
                    with open(path, encoding="ascii") as f:
                        entries.append((kind, f.read()))
            # The board dials the address and checks the name: the host given, or --mqtt-tls-name.
            entries.append((ENTRY_MQTT_TLS_NAME, a.mqtt_tls_name or mqtt[3]))
    if tls or mqtt is not None:
        blob_dir = tempfile.TemporaryDirectory(prefix="emcp-credentials-")
        blob = os.path.join(blob_dir.name, "credentials.bin")
        with open(blob, "wb") as f:
            f.write(credentials_blob(a.tls_cert, a.tls_key, entries))
        cmd += ["-device", f"loader,file={blob},addr={cred_addr:#x},force-raw=on"]
    if net:
        probe_port = free_port()
        while probe_port == port:  # two free_port() calls may return the same port: QEMU then
            probe_port = free_port()  # cannot set up both forwards (a clean-clone run met it)
        forward = f"hostfwd=tcp:127.0.0.1:{port}-:80," if a.http is not None else ""
        cmd += ["-nic", f"user,id=n0,model={nic},{forward}hostfwd=tcp:127.0.0.1:{probe_port}-:{PROBE_PORT}"]
        if os.environ.get("EMCP_PCAP"):
            cmd += ["-object", f"filter-dump,id=fd0,netdev=n0,file={os.environ['EMCP_PCAP']}-{port or probe_port}.pcap"]
    elif nic is not None:
        cmd += ["-nic", "none"]
    qemu = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=sys.stdout, stderr=sys.stderr, bufsize=0)
    stop = threading.Event()

    def on_signal(signum, _frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def relay():  # stdin -> the UART; the end of input stops the board
        try:
            while True:
                data = os.read(0, 4096)
                if not data:
                    break
                qemu.stdin.write(data)
        except OSError:
            pass
        stop.set()

    threading.Thread(target=relay, daemon=True).start()
    try:
        if port is not None:
            deadline = time.monotonic() + a.wait
            up = False
            while not stop.is_set() and qemu.poll() is None and not up:
                up = stack_answers(probe_port) and answers_http(port, tls, max(deadline - time.monotonic(), 1.0))
                if not up and time.monotonic() > deadline:
                    say(f"the board did not answer HTTP on 127.0.0.1:{port} within {a.wait:g} s")
                    return 1
                if not up:
                    time.sleep(0.2)
            if qemu.poll() is None and not stop.is_set():
                say(f"{a.board} in QEMU serving MCP on {'https' if tls else 'http'}://127.0.0.1:{port}/mcp")
        if mqtt is not None and qemu.poll() is None and not stop.is_set():
            server_id = wait_presence(mqtt[1], mqtt_name, a.wait, stop,
                                      (a.mqtt_ca, a.mqtt_tls_name or mqtt[3], a.mqtt_cert, a.mqtt_key) if mqtt[2] else None)
            if server_id is None and qemu.poll() is None and not stop.is_set():
                say(f"the board's presence did not appear on the broker {mqtt[3]}:{mqtt[1]} within {a.wait:g} s")
                return 1
            if server_id is not None:
                say(f"{a.board} in QEMU serving MCP over MQTT{' (TLS)' if mqtt[2] else ''} through "
                    f"{mqtt[3] if mqtt[2] else '127.0.0.1'}:{mqtt[1]} as server id {server_id}, "
                    f"name {mqtt_name}")
        while not stop.is_set() and qemu.poll() is None:
            stop.wait(0.2)
        return 0 if qemu.poll() is None else qemu.returncode
    finally:
        if blob_dir is not None:
            blob_dir.cleanup()
        if qemu.poll() is None:
            qemu.terminate()
            try:
                qemu.wait(5)
            except subprocess.TimeoutExpired:
                qemu.kill()
                qemu.wait()


if __name__ == "__main__":
    sys.exit(main())

"""A board in QEMU spoken to over its UART (QEMU's -serial stdio): the part the guest programs
of bench/ (rtos/guest_latency.py, target/guest_calls.py) share. Host code."""
import os
import select
import subprocess
import time


class QemuBoard:
    """QEMU started with `cmd` (its serial port on its standard input and output); line() reads
    the board's next line, stop() ends QEMU."""

    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buf = b""

    def line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"no line from the board within {timeout} s")
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    raise RuntimeError("QEMU ended: " + self.p.stderr.read().decode(errors="replace"))
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def write(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def stop(self):
        """Ends QEMU: SIGTERM (its plugins' exit callbacks run), SIGKILL after 10 s."""
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
        self.p.wait()

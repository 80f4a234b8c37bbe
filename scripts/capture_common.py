"""What the capture_*.py scripts share: a plain RESP2 connection and a throwaway
redis-server on a free port. Imported by the scripts beside it (a script's own folder is on
Python's path when it runs), so each capture script holds only what it captures."""
import shutil, socket, subprocess, tempfile, time


class Conn:
    """A RESP2 connection. Bulk strings come back as text when `text` is true, else as bytes;
    an error reply raises RuntimeError."""

    def __init__(self, port, text=True):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")
        self.text = text

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data.decode() if self.text else data
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("unexpected reply %r" % line)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A redis-server of its own (no persistence, a temporary folder), stopped and cleaned up
    on leaving the `with` block."""

    def __init__(self, binary="redis-server"):
        self.port = free_port()
        self.workdir = tempfile.mkdtemp(prefix="capture-redis-")
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.workdir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not start")

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

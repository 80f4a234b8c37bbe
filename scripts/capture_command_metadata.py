#!/usr/bin/env python3
"""Captures Redis's command metadata into server/data/commands-<version>.json.

redlab answers COMMAND INFO / DOCS / GETKEYS / LIST and takes its dispatch flags from this
file rather than from hand-typed tables. The facts come from a real redis-server: this script
starts one on a free local port (or talks to the one given with --port), asks it in RESP3 for
COMMAND INFO and COMMAND DOCS of every command and subcommand, and writes them in a stable
order (commands and subcommands sorted by name, every map in the server's own order).

RESP3 tells maps from arrays, arrays from sets and simple strings from bulk strings; JSON has
only objects, arrays and strings. Maps become objects; a set becomes an array, and the reader
turns the arrays under the keys listed in the file's "sets" entry back into sets; strings under
the keys listed in "statuses" are simple strings (the script checks that no key holds both
kinds in different places).

Usage: scripts/capture_command_metadata.py [--server redis-server] [--port N] [--out FILE]
No dependency beyond Python 3's standard library.
"""

import argparse
import json
import os
import shutil
import socket
import sys

from capture_common import Server


class Set(list):
    """A RESP3 set, kept apart from arrays until it is written as JSON."""


class Status(str):
    """A RESP simple string, kept apart from bulk strings until it is written as JSON."""


class Resp3:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2 :]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return Status(rest.decode())
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n).decode()
        if kind == b"=":
            # Verbatim string: a three-letter format and a colon before the text.
            return self._exact(int(rest))[4:].decode()
        if kind == b"_":
            return None
        if kind in (b"*", b"~"):
            n = int(rest)
            items = [self.read() for _ in range(n)]
            return Set(items) if kind == b"~" else items
        if kind == b"%":
            n = int(rest)
            out = {}
            for _ in range(n):
                k = self.read()
                out[k] = self.read()
            return out
        raise RuntimeError(f"unexpected RESP3 type {line!r}")

    def call(self, *args):
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(parts))
        return self.read()


def info_entry(reply, sets):
    """One COMMAND INFO entry as a JSON object."""
    name, arity, flags, first, last, step, cats, tips, specs, subs = reply
    note_sets("flags", flags, sets)
    note_sets("acl_categories", cats, sets)
    note_sets("tips", tips, sets)
    walk_sets(specs, "key_specs", sets)
    return name, {
        "arity": arity,
        "flags": list(flags),
        "first_key": first,
        "last_key": last,
        "step": step,
        "acl_categories": list(cats),
        "tips": list(tips),
        "key_specs": plain(specs),
        "subcommands": sorted(s[0] for s in subs),
    }


def note_sets(key, value, sets):
    """Records, per key, whether its value is a set (lists) and whether its strings are
    simple strings (for `statuses`, under the key name prefixed with '+')."""
    if isinstance(value, list):
        sets.setdefault(key, set()).add(isinstance(value, Set))
        for v in value:
            if isinstance(v, str):
                sets.setdefault("+" + key, set()).add(isinstance(v, Status))
    elif isinstance(value, str):
        sets.setdefault("+" + key, set()).add(isinstance(value, Status))


def walk_sets(value, key, sets):
    note_sets(key, value, sets)
    if isinstance(value, dict):
        for k, v in value.items():
            walk_sets(v, k, sets)
    elif isinstance(value, list):
        for v in value:
            if not isinstance(v, str):
                walk_sets(v, key + "[]", sets)


def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--port", type=int, help="use a running server instead of starting one")
    ap.add_argument("--out", help="output file (default server/data/commands-<version>.json)")
    opts = ap.parse_args()

    if opts.port is not None:
        capture(opts.port, opts.out)
    else:
        with Server(opts.server) as server:
            capture(server.port, opts.out)


def capture(port, out_path):
    conn = Resp3(port)
    conn.call("HELLO", "3")
    info = conn.call("INFO", "server")
    version = next(
        line.split(":", 1)[1].strip()
        for line in info.splitlines()
        if line.startswith("redis_version:")
    )
    sets = {}
    commands = {}
    for reply in conn.call("COMMAND", "INFO"):
        name, entry = info_entry(reply, sets)
        subs = {}
        for sub in reply[9]:
            sub_name, sub_entry = info_entry(sub, sets)
            subs[sub_name] = sub_entry
        entry["subcommands"] = {k: subs[k] for k in sorted(subs)}
        commands[name] = entry
    # Docs, asked command by command so each reply stays small.
    for name, entry in commands.items():
        docs = conn.call("COMMAND", "DOCS", name)[name]
        sub_docs = docs.pop("subcommands", {})
        walk_sets(docs, "docs", sets)
        entry["docs"] = plain(docs)
        for sub_name, sub_entry in entry["subcommands"].items():
            d = dict(sub_docs.get(sub_name, {}))
            walk_sets(d, "docs", sets)
            sub_entry["docs"] = plain(d)
            del sub_entry["subcommands"]
    mixed = sorted(k for k, kinds in sets.items() if len(kinds) > 1)
    if mixed:
        sys.exit(f"keys holding both sets and arrays: {mixed}")
    set_keys = sorted(k for k, kinds in sets.items() if True in kinds and k[0] != "+")
    status_keys = sorted(k[1:] for k, kinds in sets.items() if True in kinds and k[0] == "+")
    out = {
        "redis_version": version,
        "generated_by": "scripts/capture_command_metadata.py",
        "sets": set_keys,
        "statuses": status_keys,
        "commands": {k: commands[k] for k in sorted(commands)},
    }
    path = out_path or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "server", "data",
        f"commands-{version}.json",
    )
    with open(path, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(commands)} commands from Redis {version} -> {os.path.normpath(path)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Captures the argument specifications of every command (COMMAND DOCS) and their arity and
flags (COMMAND INFO) from a real redis-server into tests/data/command_args.txt, the table the
differential fuzzer generates commands from (server/src/fuzzing/argspec.rs reads it).

Usage: scripts/capture_command_args.py [PORT]   (without PORT it starts redis-server itself)

One line per command or subcommand:  name arity flag,flag,... | arg arg ...
An argument is  [?]ATOM[*|**]  with ? = optional, * = multiple, ** = multiple with its token
repeated before each element. ATOM is
  =TOKEN               a pure token; in double quotes unless it is [A-Za-z0-9_#.-]+
  [TOKEN=]type@name    type = key str int dbl pat unix
  [TOKEN=](a|b|...)    one of
  [TOKEN=]{a b ...}    a block (all in order)
"""
import os, re, sys

from capture_common import Conn, Server

TYPES = {"key": "key", "string": "str", "integer": "int", "double": "dbl", "pattern": "pat",
         "unix-time": "unix"}
TOKEN_RE = re.compile(r"^[A-Za-z0-9_#.\-]+$")
NAME_RE = re.compile(r"^[A-Za-z0-9_\-]+$")


def pairs(flat):
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def atom(arg):
    a = pairs(arg)
    kind, token = a["type"], a.get("token")
    if token is not None and not TOKEN_RE.match(token):
        if '"' in token or " " in token:
            sys.exit("token %r of %r cannot be quoted" % (token, a["name"]))
        token = '"' + token + '"'
    if kind == "pure-token":
        text = "=" + token
    else:
        if kind == "oneof":
            body = "(" + "|".join(atom(x) for x in a["arguments"]) + ")"
        elif kind == "block":
            body = "{" + " ".join(atom(x) for x in a["arguments"]) + "}"
        else:
            name = a["name"] if NAME_RE.match(a["name"]) else "x"
            body = TYPES[kind] + "@" + name
        text = (token + "=" if token is not None else "") + body
    flags = a.get("flags", [])
    if "optional" in flags:
        text = "?" + text
    if "multiple_token" in flags:
        text += "**"
    elif "multiple" in flags:
        text += "*"
    return text


def main():
    if len(sys.argv) > 1:
        capture(int(sys.argv[1]))
    else:
        with Server() as server:
            capture(server.port)


def capture(port):
    c = Conn(port)
    version = pairs(c.call("HELLO", "2"))["version"]
    info = {}
    for entry in c.call("COMMAND", "INFO"):
        info[entry[0]] = entry
        for sub in entry[9] if len(entry) > 9 else []:
            info[sub[0]] = sub
    docs = pairs(c.call("COMMAND", "DOCS"))
    lines = []

    def add(name, doc):
        d = pairs(doc)
        i = info[name]
        args = " ".join(atom(x) for x in d.get("arguments", []))
        lines.append("%s %d %s | %s" % (name, i[1], ",".join(i[2]) or "-", args))
        subs = d.get("subcommands")
        if subs:
            for sname, sdoc in pairs(subs).items():
                add(sname, sdoc)

    for name, doc in docs.items():
        add(name, doc)
    lines.sort()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "command_args.txt")
    with open(out, "w") as f:
        f.write("# COMMAND DOCS arguments of redis-server %s; scripts/capture_command_args.py writes this.\n"
                % version)
        f.write("\n".join(lines) + "\n")
    print("wrote %d commands to %s" % (len(lines), os.path.normpath(out)))


main()

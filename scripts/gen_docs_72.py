#!/usr/bin/env python3
"""Writes server/data/commands-docs-7.2.json: what COMMAND DOCS prints under Redis 7.2.

No redis-server 7.2 runs here. The source is redis-doc's machine-readable command table for
Redis 7.2 (commands.json), which the PyPI package `iredis` ships as iredis/data/commands.json
(iredis 1.16.1: 370 commands and subcommands, CLIENT NO-TOUCH and WAITAOF but no HEXPIRE).
Redis's utils/generate-commands-json.py made that table from a running server's COMMAND and
COMMAND DOCS replies, so its texts are the server's own; it reshaped two things, which this
script puts back:

* an argument's `flags` list became one boolean per flag (`"optional": true`), moved after the
  argument's other fields: here they are a `flags` list again, in Redis's order (optional,
  multiple, multiple_token), placed where Redis 7.2's addReplyCommandArgList prints it;
* COMMAND INFO's fields (arity, ACL categories, key specs, command flags, tips) were merged in:
  they are dropped, since COMMAND INFO keeps its own sources.

Every map is written in the order Redis 7.2 prints it (the same as valkey-server 8.1, which
kept that code: server/data/commands-valkey-8.1.8.json): a command's summary, since, group,
complexity, doc_flags, deprecated_since, replaced_by, history, arguments; an argument's name,
type, display_text, key_spec_index, token, summary, since, deprecated_since, flags, arguments.
Subcommands are one entry each (`object|encoding`); redlab adds the `subcommands` map itself,
listing only the subcommands it implements.

Usage:
    pip download --no-deps iredis==1.16.1 && unzip iredis-1.16.1-*.whl 'iredis/data/*'
    scripts/gen_docs_72.py [--table iredis/data/commands.json] [--out FILE]
No dependency beyond Python 3's standard library.
"""

import argparse
import json
import os
import sys

COMMAND_KEYS = [
    "summary",
    "since",
    "group",
    "complexity",
    "doc_flags",
    "deprecated_since",
    "replaced_by",
    "history",
]
ARG_KEYS_BEFORE_FLAGS = [
    "name",
    "type",
    "display_text",
    "key_spec_index",
    "token",
    "summary",
    "since",
    "deprecated_since",
]
ARG_FLAGS = ["optional", "multiple", "multiple_token"]
# What the table adds from COMMAND INFO, or as a boolean flag: not part of an argument's docs.
ARG_KNOWN = set(ARG_KEYS_BEFORE_FLAGS) | set(ARG_FLAGS) | {"arguments"}
COMMAND_KNOWN = set(COMMAND_KEYS) | {
    "arguments",
    "acl_categories",
    "arity",
    "key_specs",
    "command_flags",
    "hints",
}


def argument(arg, where):
    unknown = set(arg) - ARG_KNOWN
    if unknown:
        sys.exit(f"{where}: argument {arg.get('name')!r} has unknown fields {sorted(unknown)}")
    out = {k: arg[k] for k in ARG_KEYS_BEFORE_FLAGS if k in arg}
    flags = [f for f in ARG_FLAGS if arg.get(f)]
    if flags:
        out["flags"] = flags
    if "arguments" in arg:
        out["arguments"] = [argument(a, where) for a in arg["arguments"]]
    return out


def docs(name, entry):
    unknown = set(entry) - COMMAND_KNOWN
    if unknown:
        sys.exit(f"{name}: unknown fields {sorted(unknown)}")
    out = {k: entry[k] for k in COMMAND_KEYS if k in entry}
    if entry.get("arguments"):
        out["arguments"] = [argument(a, name) for a in entry["arguments"]]
    return out


# What later releases changed in the entries of commands Redis 7.2 has, as
# `(release level, command, change)`: the file gets a `command@level` entry, 7.2's entry
# (or the previous release's) with the change applied, which the profiles from that release
# on print. Only the changes not written by hand elsewhere: the entries that a later release
# rewrote with new arguments (CLIENT KILL and CLIENT LIST 7.4, BITOP, XADD and XTRIM 8.2,
# SET and XREADGROUP 8.4, HSCAN 7.4) are server/data/commands-later.json's or
# valkey-server 8.1's (since::LATER_DOCS).
#
# Source: Redis's published command table (redis/docs `data/commands_core.json`), where it
# differs from the 7.2 table here. Each change is also in valkey-server 8.1's table (Valkey
# took Redis's development branch of March 2024, after 7.2.4 and before 7.4.0), which dates
# it to 7.4:
# - GEORADIUS_RO, GEORADIUSBYMEMBER and GEORADIUSBYMEMBER_RO: the history lines 6.2.0 "ANY"
#   and 7.0.0 "uppercase unit names" that 7.2 lacked (redis/redis#12434, 2024);
# - XINFO CONSUMERS: the 7.2.0 line reads "..., and changed the meaning of `idle`.";
# - XGROUP CREATE: the ENTRIESREAD argument is named `entriesread`, as XGROUP SETID's.
# Read against `commands_core.json` of the redis/docs repository (Redis's table, 8.x): every
# other entry of a command Redis 7.2 has is 7.2's there, but for those rewritten by hand.
ANY_COUNT = ["6.2.0", "Added the `ANY` option for `COUNT`."]
UPPERCASE_UNITS = ["7.0.0", "Added support for uppercase unit names."]


def set_field(key, value):
    return lambda d: d.update({key: value})


def rename_argument(old, new):
    def change(d):
        for a in d["arguments"]:
            if a["name"] == old:
                a["name"] = new
                return
        sys.exit(f"no argument {old!r} to rename")

    return change


LATER = [
    (74, "georadius_ro", set_field("history", [ANY_COUNT, UPPERCASE_UNITS])),
    (74, "georadiusbymember", set_field("history", [ANY_COUNT, UPPERCASE_UNITS])),
    (74, "georadiusbymember_ro", set_field("history", [ANY_COUNT, UPPERCASE_UNITS])),
    (
        74,
        "xinfo|consumers",
        set_field(
            "history",
            [["7.2.0", "Added the `inactive` field, and changed the meaning of `idle`."]],
        ),
    ),
    (74, "xgroup|create", rename_argument("entries-read", "entriesread")),
]


def in_order(d):
    """`d` with its fields in the order Redis prints them."""
    order = COMMAND_KEYS + ["arguments"]
    return {k: d[k] for k in order if k in d}


def apply_later(commands):
    latest = {}
    for level, name, change in sorted(LATER, key=lambda c: c[0]):
        base = latest.get(name, commands[name])["docs"]
        entry = json.loads(json.dumps(base))
        change(entry)
        commands[f"{name}@{level}"] = {"docs": in_order(entry)}
        latest[name] = commands[f"{name}@{level}"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="/tmp/fk/iredis/data/commands.json")
    parser.add_argument(
        "--out", default=os.path.join(here, "..", "server", "data", "commands-docs-7.2.json")
    )
    args = parser.parse_args()
    with open(args.table) as f:
        table = json.load(f)
    commands = {}
    for key in sorted(table):
        name = key.lower().replace(" ", "|")
        commands[name] = {"docs": docs(key, table[key])}
    apply_later(commands)
    root = {
        "redis_version": "7.2",
        "source": "redis-doc's commands.json for Redis 7.2 (generated by Redis's "
        "utils/generate-commands-json.py from a 7.2 server's COMMAND DOCS), as shipped in the "
        "PyPI package iredis 1.16.1 (iredis/data/commands.json); COMMAND DOCS fields only. "
        "Entries `name@74`...: that release's entry where Redis's published command reference "
        "differs (see the script)",
        "generated_by": "scripts/gen_docs_72.py",
        "sets": ["doc_flags", "flags", "history"],
        "statuses": ["doc_flags", "flags"],
        "commands": commands,
    }
    with open(args.out, "w") as f:
        json.dump(root, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(commands)} entries written to {os.path.normpath(args.out)}")


if __name__ == "__main__":
    main()

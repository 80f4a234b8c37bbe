#!/usr/bin/env python3
"""Captures DUMP payloads of every type and encoding from a real redis-server into
tests/data/dump_payloads.txt, the seeds the RESTORE fuzzer mutates
(server/src/fuzzing/restore.rs).

Usage: scripts/capture_dump_payloads.py   (starts its own redis-server on a free port)

One line per payload:  name encoding hex-of-the-DUMP-reply
"""
import os

from capture_common import Conn, Server


def main():
    with Server() as server:
        c = Conn(server.port, text=False)
        version = c.call("INFO", "server").decode().split("redis_version:")[1].split()[0]
        keys = []

        def make(name, *cmds):
            for cmd in cmds:
                c.call(*cmd)
            keys.append(name)

        make("str_int", ("SET", "str_int", "12345"))
        make("str_neg_int", ("SET", "str_neg_int", "-9223372036854775808"))
        make("str_embstr", ("SET", "str_embstr", "hello"))
        make("str_raw", ("SET", "str_raw", "".join(chr(48 + i % 75) for i in range(100))))
        make("str_lzf", ("SET", "str_lzf", "ab" * 200))
        make("str_binary", ("SET", "str_binary", bytes(range(256))))
        make("list_small", ("RPUSH", "list_small", "a", "b", "1", "-200", "70000", "x" * 70))
        make("list_ints", ("RPUSH", "list_ints", *[str(v) for v in (0, 12, -12, 300, -300, 70000, 2**31, -2**40, 2**63 - 1)]))
        make("list_nodes", ("RPUSH", "list_nodes", *["elem%d" % i for i in range(1500)]))
        c.call("CONFIG", "SET", "list-compress-depth", "1")
        make("list_compressed", ("RPUSH", "list_compressed", *["compress-me-%d" % (i % 10) for i in range(2000)]))
        c.call("CONFIG", "SET", "list-compress-depth", "0")
        make("set_intset", ("SADD", "set_intset", "1", "2", "3", "-5", "70000", "9223372036854775807"))
        make("set_hashtable", ("SADD", "set_hashtable", "a", "b", "c", "1"))
        make("set_big", ("SADD", "set_big", *["m%d" % i for i in range(200)]))
        make("zset_listpack", ("ZADD", "zset_listpack", "1", "a", "2.5", "b", "-inf", "c", "inf", "d", "100", "12"))
        make("zset_skiplist", ("ZADD", "zset_skiplist", *sum([[str(i / 3), "m%d" % i] for i in range(200)], [])))
        make("hash_listpack", ("HSET", "hash_listpack", "f1", "v1", "f2", "2", "n", "-300", "x", "y" * 20))
        make("hash_hashtable", *[("HSET", "hash_hashtable", "f%d" % i, "v%d" % i) for i in range(600)])
        make("hash_longvalue", ("HSET", "hash_longvalue", "f", "v" * 100, "g", "1"))
        make("stream", ("XADD", "stream", "1-1", "f", "v"), ("XADD", "stream", "2-1", "g", "w"))
        lines = []
        for k in keys:
            enc = c.call("OBJECT", "ENCODING", k).decode()
            lines.append("%s %s %s" % (k, enc, c.call("DUMP", k).hex()))
        out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "dump_payloads.txt")
        with open(out, "w") as f:
            f.write("# DUMP payloads from redis-server %s; scripts/capture_dump_payloads.py writes this.\n" % version)
            f.write("\n".join(lines) + "\n")
        print("wrote %d payloads to %s" % (len(lines), os.path.normpath(out)))


main()

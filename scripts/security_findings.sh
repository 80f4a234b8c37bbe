#!/usr/bin/env bash
# Replays the findings of the security issue (issue 11) against up to three servers side by
# side and prints a markdown table: what each server answered, or how it failed (crash, hang).
#
#   scripts/security_findings.sh BEFORE_BIN AFTER_BIN [REDIS_BIN]
#
# BEFORE_BIN and AFTER_BIN are redlab-server binaries (a build of an older commit and of this
# one); REDIS_BIN defaults to redis-server. Every probe gets a fresh server, a 10 s limit, and a
# PING afterwards to tell "answered" from "died". Needs redis-cli.
set -uo pipefail

BEFORE=${1:?before binary}
AFTER=${2:?after binary}
REDIS=${3:-$(command -v redis-server)}
PORT_BASE=${PORT_BASE:-7310}
LIMIT=${LIMIT:-10}

start() { # bin port extra-args...
  local bin=$1 port=$2; shift 2
  "$bin" --port "$port" --save '' --appendonly no "$@" >/dev/null 2>&1 &
  echo $! >"/tmp/findings.$port.pid"
  for _ in $(seq 100); do
    [ -n "$(redis-cli -p "$port" PING 2>/dev/null)" ] && return 0
    sleep 0.05
  done
}

stop() { # port
  local pid
  pid=$(cat "/tmp/findings.$1.pid")
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

# Runs one probe (a shell snippet using $P as the port) and prints a one-line verdict.
probe() { # bin port probe-snippet extra-server-args...
  local bin=$1 port=$2 snippet=$3; shift 3
  start "$bin" "$port" "$@"
  local out rc t0 t1 ms
  t0=$(date +%s%N)
  out=$(P=$port timeout "$LIMIT" bash -c "$snippet" 2>&1)
  rc=$?
  t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  local alive
  alive=$(timeout 2 redis-cli -p "$port" PING 2>/dev/null)
  stop "$port"
  out=$(printf '%s' "$out" | tr '\n' ' ' | sed 's/|/\\|/g' | cut -c1-90)
  if [ "$rc" = 124 ]; then
    echo "HANG (no answer in ${LIMIT} s)"
  elif [ -z "$alive" ]; then
    echo "server died: ${out:-no reply}"
  else
    echo "${out} (${ms} ms)"
  fi
}

row() { # title snippet extra-server-args...
  local title=$1 snippet=$2; shift 2
  local b a r
  b=$(probe "$BEFORE" $((PORT_BASE)) "$snippet" "$@")
  a=$(probe "$AFTER" $((PORT_BASE + 1)) "$snippet" "$@")
  r=$(probe "$REDIS" $((PORT_BASE + 2)) "$snippet" "$@")
  printf '| %s | %s | %s | %s |\n' "$title" "$b" "$a" "$r"
}

cli='redis-cli -p $P'
echo "| finding | before | after | redis-server $("$REDIS" --version | sed 's/.*v=\([^ ]*\).*/\1/') |"
echo "|---|---|---|---|"
row 'unpack({}, 0, 2^31-1)' "$cli EVAL 'return unpack({}, 0, 2147483647)' 0"
row 'unpack({}, -2^31, 2^31-1)' "$cli EVAL 'return unpack({}, -2147483648, 2147483647)' 0"
row 'loadstring of bytecode' "$cli EVAL 'local f = loadstring(string.char(27) .. \"LuaQ\" .. string.rep(\"x\", 64)) return tostring(f)' 0"
row 'load() with a reader returning bytecode' "$cli EVAL 'local n = 0 local f, e = load(function() n = n + 1 if n == 1 then return string.char(27) .. \"LuaQ\" end end) return tostring(f) .. \" \" .. tostring(e)' 0"
row 'string.find, 200,000 pattern items matching 200,000 bytes' "$cli EVAL 'return string.find(string.rep(\"a\", 200000), string.rep(\"a?\", 200000))' 0"
row '800,000 distinct 100-byte strings' "$cli EVAL 'local t = {} for i = 1, 800000 do t[i] = string.rep(\"x\", 90) .. string.format(\"%010d\", i) end return #t' 0"
row 'CONFIG GET *?*?...x (12 groups)' "$cli CONFIG GET '*?*?*?*?*?*?*?*?*?*?*?*?x'"
row 'KEYS a*a*...b (20 groups) over 1 long key' "$cli SET \$(printf 'a%.0s' \$(seq 60)) v >/dev/null; $cli KEYS '$(printf 'a*%.0s' $(seq 20))b'"
row 'FUNCTION LOAD with a looping body' "$cli FUNCTION LOAD \"\$(printf '#!lua name=spin\nwhile true do end')\"; $cli PING"
row 'BLPOP q 1e-10' "$cli BLPOP q 1e-10"
row 'DEBUG SLEEP inf, then PING' "$cli DEBUG SLEEP inf; $cli PING" --enable-debug-command yes
row 'MEMORY USAGE k SAMPLES -5' "$cli SET k v >/dev/null; $cli MEMORY USAGE k SAMPLES -5"
row 'cmsgpack.unpack_one(s, 2^40)' "$cli EVAL 'return {cmsgpack.unpack_one(cmsgpack.pack(1,2), 2^40)}' 0"
row 'cjson.encode_sparse_array(true, -1, -1)' "$cli EVAL 'return {cjson.encode_sparse_array(true, -1, -1)}' 0"
row 'math.random(2^31, 1)' "$cli EVAL 'return math.random(2^31, 1)' 0"
row 'table.insert(t, -2^31, 1)' "$cli EVAL 'local t = {} table.insert(t, -2147483648, 1) return #t' 0"
row 'script write over maxmemory' "$cli CONFIG SET maxmemory 1 >/dev/null; $cli EVAL 'return redis.call(\"SET\", \"k\", \"v\")' 0"
row 'unauthenticated SCRIPT KILL during a busy script' "redis-cli -p \$P -a pw --no-auth-warning EVAL 'while true do end' 0 >/dev/null 2>&1 & sleep 0.5; $cli SCRIPT KILL; redis-cli -p \$P -a pw --no-auth-warning SCRIPT KILL >/dev/null" --requirepass pw
row 'unauthenticated SHUTDOWN NOSAVE during a busy script' "redis-cli -p \$P -a pw --no-auth-warning EVAL 'while true do end' 0 >/dev/null 2>&1 & sleep 0.5; $cli SHUTDOWN NOSAVE; redis-cli -p \$P -a pw --no-auth-warning SCRIPT KILL >/dev/null" --requirepass pw

//! Builds the Lua 5.1.5 that redlab embeds, from the sources shipped in the `lua-src` crate, with
//! a few small edits that make it behave like the Lua inside redis-server 7.0 and keep hostile
//! scripts from crashing the process:
//!
//! - every byte of a string is hashed (stock 5.1 samples long strings, so strings differing only
//!   in unsampled bytes all collide and building many of them is quadratic);
//! - the pattern matcher's recursion is bounded, so a pattern of many items ends in a Lua error
//!   instead of overflowing the thread's stack;
//! - `unpack` checks its range in 64-bit arithmetic before counting it;
//! - no precompiled chunk from outside is ever loaded: every chunk a script or client gives goes
//!   to the text parser, as in Redis, where a binary chunk is a syntax error; the one way in for
//!   bytecode is `redlab_load_own_dump`, which only redlab calls, with what its own `lua_dump`
//!   wrote for a chunk its parser compiled (`lua::chunks`);
//! - `redlab_is_plain_array` tells whether a table is as a fresh array of n slots would be, so
//!   EVAL's KEYS and ARGV tables can be refilled (`lua::runtime`), and `redlab_refill_field`
//!   refills such a table in one call; `redlab_string_at` reads a string argument in one call;
//!   `redlab_push_refs` pushes several registry values at once; `redlab_push_status` pushes
//!   redis.call's `{ok = ...}` table in one call;
//! - the whole library is compiled with `-fwrapv`, so Lua's own signed-overflow checks cannot be
//!   optimized away.
//!
//! Every edit names the text it replaces; if that text is missing (another Lua release) the build
//! fails instead of silently compiling stock Lua.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The lua-src release whose sources are edited; pinned in Cargo.toml's build-dependencies.
const LUA_SRC_VERSION: &str = "551.0.2";

/// Pattern-matcher recursion bound. Each level costs a few hundred bytes of C stack at most, so
/// this stays well inside a 2 MB test thread while allowing patterns far longer than real ones.
const MATCH_MAX_DEPTH: u32 = 5000;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let src = lua_sources(&out);
    let dst = out.join("lua-5.1.5");
    fs::create_dir_all(&dst).expect("create OUT_DIR/lua-5.1.5");
    let mut c_files = Vec::new();
    for entry in fs::read_dir(&src).unwrap_or_else(|e| panic!("read {}: {e}", src.display())) {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.ends_with(".c") || name.ends_with(".h")) {
            continue;
        }
        let text =
            fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let text = edit(&name, text);
        let target = dst.join(&name);
        fs::write(&target, text).unwrap_or_else(|e| panic!("write {}: {e}", target.display()));
        if name.ends_with(".c") {
            c_files.push(target);
        }
    }
    c_files.sort();

    let target = env::var("TARGET").unwrap_or_default();
    let mut build = cc::Build::new();
    build
        .warnings(false)
        .include(&dst)
        .files(&c_files)
        .flag("-fwrapv")
        .flag_if_supported("-fno-common");
    if target.contains("linux") || target.contains("bsd") || target.contains("apple-darwin") {
        build.define("LUA_USE_LINUX", None);
    } else if target.contains("windows") {
        build.define("LUA_USE_WINDOWS", None);
    } else {
        build.define("LUA_USE_POSIX", None);
    }
    if env::var("PROFILE").as_deref() == Ok("debug") {
        build.define("LUA_USE_APICHECK", None);
    }
    build.compile("lua5.1");
}

/// Appended to ldo.c: loads bytecode that redlab's own `lua_dump` wrote, in this process, for a
/// chunk its own parser compiled (`lua::chunks`), so a body compiled once is not parsed again by
/// every engine. No Lua function reaches it: `loadstring` and every chunk a script or client
/// gives still go to the text parser, where a binary chunk is a syntax error.
const OWN_DUMP_LOADER: &str = r#"

/* redlab: loads bytecode that redlab's own lua_dump wrote for a chunk its parser compiled;
   never bytes a script or a client gave. */
typedef struct RedlabDump { const char *s; size_t size; } RedlabDump;

static const char *redlab_dump_reader (lua_State *L, void *ud, size_t *size) {
  RedlabDump *d = (RedlabDump *)ud;
  (void)L;
  if (d->size == 0) return NULL;
  *size = d->size;
  d->size = 0;
  return d->s;
}

int redlab_load_own_dump (lua_State *L, const char *buff, size_t size, const char *name) {
  struct SParser p;
  ZIO z;
  RedlabDump d;
  int status;
  d.s = buff;
  d.size = size;
  lua_lock(L);
  luaZ_init(L, &z, redlab_dump_reader, &d);
  p.z = &z; p.name = name; p.own_dump = 1;
  luaZ_initbuffer(L, &p.buff);
  status = luaD_pcall(L, f_parser, &p, savestack(L, L->top), L->errfunc);
  luaZ_freebuffer(L, &p.buff);
  lua_unlock(L);
  return status;
}
"#;

/// Appended to lapi.c: whether the value at `idx` is a table that a fresh
/// `lua_createtable(L, n, 0)` filled with `n` values could not be told from: no metatable, an
/// array part of exactly `n` slots and an empty hash part. `lua::runtime` refills such a table
/// (EVAL's KEYS and ARGV) instead of making a new one per call.
const PLAIN_ARRAY_CHECK: &str = r#"

/* redlab: a table a fresh lua_createtable(L, n, 0) could not be told from, once refilled. */
LUA_API int redlab_is_plain_array (lua_State *L, int idx, int n) {
  StkId o = index2adr(L, idx);
  Table *t;
  if (!ttistable(o)) return 0;
  t = hvalue(o);
  return t->metatable == NULL && n >= 0 && t->sizearray == n && t->lsizenode == 0 &&
         ttisnil(gkey(t->node)) && ttisnil(gval(t->node));
}

/* redlab: refills t[k] (t at g, k at k, both raw) with the n strings s[i] (len[i] bytes) when it
   is such a plain array of n; a slot that already holds those bytes is left as it is. Returns 0,
   touching nothing, when t[k] is not one. New strings are made as lua_pushlstring makes them (a
   collector step first) and stored as lua_rawseti stores them (with the collector's barrier). */
LUA_API int redlab_refill_field (lua_State *L, int g, int k, int n, const char *const *s,
                                 const size_t *len) {
  StkId go = index2adr(L, g);
  StkId ko = index2adr(L, k);
  const TValue *o;
  Table *t;
  int i;
  if (!ttistable(go)) return 0;
  o = luaH_get(hvalue(go), ko);
  if (!ttistable(o)) return 0;
  t = hvalue(o);
  if (!(t->metatable == NULL && n >= 0 && t->sizearray == n && t->lsizenode == 0 &&
        ttisnil(gkey(t->node)) && ttisnil(gval(t->node))))
    return 0;
  for (i = 0; i < n; i++) {
    TValue *v = &t->array[i];
    if (ttisstring(v) && tsvalue(v)->len == len[i] && memcmp(svalue(v), s[i], len[i]) == 0)
      continue;
    luaC_checkGC(L);
    setsvalue(L, v, luaS_newlstr(L, s[i], len[i]));
    luaC_barriert(L, t, v);
  }
  return 1;
}

/* redlab: pushes the registry's values at refs[0..n), as n lua_rawgeti would (the caller made
   room on the stack for them). */
LUA_API void redlab_push_refs (lua_State *L, int n, const int *refs) {
  Table *reg = hvalue(registry(L));
  int i;
  for (i = 0; i < n; i++) {
    setobj2s(L, L->top, luaH_getnum(reg, refs[i]));
    api_incr_top(L);
  }
}

/* redlab: pushes a status reply's table {ok = s} (s of len bytes), as lua_createtable(L, 0, 1),
   lua_pushlstring and a raw set of the field "ok" would (the caller made room for two values).
   The table is on the stack before the strings are made; no collector step runs between a
   string's making and its storing. */
LUA_API void redlab_push_status (lua_State *L, const char *s, size_t len) {
  Table *t;
  TValue k;
  luaC_checkGC(L);
  t = luaH_new(L, 0, 1);
  sethvalue(L, L->top, t);
  api_incr_top(L);
  setsvalue(L, L->top, luaS_newlstr(L, s, len));
  api_incr_top(L);
  setsvalue(L, &k, luaS_newliteral(L, "ok"));
  setobj2t(L, luaH_set(L, t, &k), L->top - 1);
  luaC_barriert(L, t, L->top - 1);
  L->top--;
}

/* redlab: the bytes and length of the string at idx, or NULL (a number is not converted). */
LUA_API const char *redlab_string_at (lua_State *L, int idx, size_t *len) {
  StkId o = index2adr(L, idx);
  if (!ttisstring(o)) return NULL;
  *len = tsvalue(o)->len;
  return svalue(o);
}
"#;

/// Applies the edits for one source file; panics if an anchor is missing.
fn edit(name: &str, text: String) -> String {
    match name {
        "lstring.c" => replace(
            name,
            text,
            "size_t step = (l>>5)+1;",
            "size_t step = 1;  /* redlab: hash every byte, as Redis does */",
            1,
        ),
        "ldo.c" => {
            let text = replace(
                name,
                text,
                "tf = ((c == LUA_SIGNATURE[0]) ? luaU_undump : luaY_parser)(L, p->z,",
                "(void)c;  /* redlab: binary chunks go to the parser and fail there, as in Redis */\n  tf = (p->own_dump ? luaU_undump : luaY_parser)(L, p->z,",
                1,
            );
            let text = replace(
                name,
                text,
                "  Mbuffer buff;  /* buffer to be used by the scanner */\n  const char *name;\n};",
                "  Mbuffer buff;  /* buffer to be used by the scanner */\n  const char *name;\n  int own_dump;  /* redlab: bytes redlab_load_own_dump was given */\n};",
                1,
            );
            let text = replace(
                name,
                text,
                "p.z = z; p.name = name;",
                "p.z = z; p.name = name; p.own_dump = 0;",
                1,
            );
            text + OWN_DUMP_LOADER
        }
        "lapi.c" => text + PLAIN_ARRAY_CHECK,
        "lbaselib.c" => replace(
            name,
            text,
            "  n = e - i + 1;  /* number of elements */",
            "  if ((long long)e - (long long)i >= (long long)INT_MAX)  /* redlab: checked range */\n    return luaL_error(L, \"too many results to unpack\");\n  n = e - i + 1;  /* number of elements */",
            1,
        ),
        "lstrlib.c" => {
            let text = replace(
                name,
                text,
                "  int level;  /* total number of captures (finished or unfinished) */",
                "  int level;  /* total number of captures (finished or unfinished) */\n  int matchdepth;  /* redlab: recursion depth of match */",
                1,
            );
            let text = replace(name, text, "ms.level = 0;", "ms.level = 0; ms.matchdepth = 0;", 3);
            let wrapper = format!(
                "static const char *match_body (MatchState *ms, const char *s, const char *p);\n\
                 /* redlab: bounds the matcher's recursion so a long pattern cannot overflow the C stack */\n\
                 static const char *match (MatchState *ms, const char *s, const char *p) {{\n  \
                   const char *r;\n  \
                   if (++ms->matchdepth > {MATCH_MAX_DEPTH})\n    \
                     luaL_error(ms->L, \"pattern too complex\");\n  \
                   r = match_body(ms, s, p);\n  \
                   ms->matchdepth--;\n  \
                   return r;\n\
                 }}\n\n\
                 static const char *match_body (MatchState *ms, const char *s, const char *p) {{\n  init:"
            );
            replace(
                name,
                text,
                "static const char *match (MatchState *ms, const char *s, const char *p) {\n  init:",
                &wrapper,
                1,
            )
        }
        _ => text,
    }
}

fn replace(file: &str, text: String, from: &str, to: &str, expected: usize) -> String {
    let found = text.matches(from).count();
    assert_eq!(
        found, expected,
        "{file}: expected {expected} occurrence(s) of {from:?}, found {found}; is this Lua 5.1.5?"
    );
    text.replace(from, to)
}

/// Finds lua-src's `lua-5.1.5` directory. Cargo has already fetched lua-src (it is a
/// build-dependency), so an offline `cargo metadata` of a one-dependency manifest names its
/// directory wherever the registry or a vendored source put it.
fn lua_sources(out: &Path) -> PathBuf {
    let probe = out.join("lua-src-probe");
    fs::create_dir_all(probe.join("src")).expect("create probe dir");
    fs::write(
        probe.join("Cargo.toml"),
        format!(
            "[package]\nname = \"lua-src-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
             [lib]\npath = \"src/lib.rs\"\n\n[dependencies]\nlua-src = \"={LUA_SRC_VERSION}\"\n\n[workspace]\n"
        ),
    )
    .expect("write probe manifest");
    fs::write(probe.join("src/lib.rs"), "").expect("write probe lib");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--manifest-path",
        ])
        .arg(probe.join("Cargo.toml"))
        .current_dir(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata for lua-src {LUA_SRC_VERSION} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = String::from_utf8_lossy(&output.stdout);
    let key = "\"manifest_path\":\"";
    for (at, _) in json.match_indices(key) {
        let rest = &json[at + key.len()..];
        let Some(end) = rest.find('"') else { continue };
        let manifest = PathBuf::from(rest[..end].replace("\\\\", "\\"));
        let dir = manifest.parent().unwrap().join("lua-5.1.5");
        if dir.join("lstrlib.c").is_file() && dir.join("lua.h").is_file() {
            return dir;
        }
    }
    panic!("lua-src {LUA_SRC_VERSION}: no lua-5.1.5 directory in cargo metadata output");
}

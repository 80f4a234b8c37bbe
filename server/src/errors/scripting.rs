//! Error texts of EVAL, scripts, FUNCTION and FCALL, the Lua sandbox and `redis.call`.

/// A script with declared flags that reached its start over the limit (inside EXEC).
pub const OOM_SCRIPT_START: &str =
    "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'";
pub const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";
/// The same under the Valkey profiles (Valkey 8.0 dropped the advice).
pub const NOSCRIPT_VALKEY: &str = "NOSCRIPT No matching script.";
pub const NUMKEYS_NEGATIVE: &str = "ERR Number of keys can't be negative";
pub const NUMKEYS_TOO_BIG: &str = "ERR Number of keys can't be greater than number of args";
pub const REACHED_LUA_STACK_LIMIT: &str = "ERR reached lua stack limit";
pub const LIBRARY_NAME_ARGUMENT_WAS_NOT_GIVEN: &str = "ERR library name argument was not given";
pub const LIBRARY_NOT_FOUND: &str = "ERR Library not found";
pub const FUNCTION_FLUSH_ONLY_SUPPORTS_SYNC_ASYNC: &str =
    "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";
pub const GIVEN_TYPE_IS_NOT_A_FUNCTION: &str = "ERR given type is not a function";
pub const FUNCTION_NOT_FOUND: &str = "ERR Function not found";
pub const BAD_NUMBER_OF_KEYS_PROVIDED: &str = "ERR Bad number of keys provided";
pub const CAN_NOT_RUN_SCRIPT_ON_CLUSTER: &str =
    "ERR Can not run script on cluster, 'no-cluster' flag is set.";
pub const CAN_NOT_EXECUTE_A_SCRIPT_WITH: &str =
    "ERR Can not execute a script with write flag using *_ro command.";
pub const SCRIPT_FLUSH_ONLY_SUPPORT_SYNC_ASYNC: &str =
    "ERR SCRIPT FLUSH only support SYNC|ASYNC option";
pub const SCRIPT_DEBUG_IS_NOT_SUPPORTED_BY: &str = "ERR SCRIPT DEBUG is not supported by redlab";
pub const USE_SCRIPT_DEBUG_YES_SYNC_NO: &str = "ERR Use SCRIPT DEBUG YES/SYNC/NO";
pub const WRONG_RESTORE_POLICY_GIVEN_VALUE_SHOULD: &str =
    "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.";

// ---- script and library shebangs ----
pub const SHEBANG_INVALID: &str = "ERR Invalid script shebang";
pub const LIBRARY_METADATA_MISSING: &str = "ERR Missing library metadata";
pub const LIBRARY_METADATA_INVALID: &str = "ERR Invalid library metadata";
pub const LIBRARY_METADATA_NAME_TWICE: &str =
    "ERR Invalid metadata value, name argument was given multiple times";
pub const LIBRARY_NAME_NOT_GIVEN: &str = "ERR Library name was not given";
/// The library-name rule, as the shebang check and `redis.register_function` both state it.
pub const LIBRARY_NAME_RULE: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// `ERR Unexpected engine in script shebang: <engine>`
pub fn shebang_engine(engine: &[u8]) -> String {
    format!(
        "ERR Unexpected engine in script shebang: {}",
        String::from_utf8_lossy(engine)
    )
}

/// `ERR Unknown lua shebang option: <option>`
pub fn shebang_option(option: &[u8]) -> String {
    format!(
        "ERR Unknown lua shebang option: {}",
        String::from_utf8_lossy(option)
    )
}

/// `ERR Unexpected flag in script shebang: <flag>`
pub fn shebang_flag(flag: &[u8]) -> String {
    format!(
        "ERR Unexpected flag in script shebang: {}",
        String::from_utf8_lossy(flag)
    )
}

/// `ERR Invalid metadata value given: <part>`
pub fn library_metadata_value(part: &[u8]) -> String {
    format!(
        "ERR Invalid metadata value given: {}",
        String::from_utf8_lossy(part)
    )
}

/// `ERR Engine '<engine>' not found`
pub fn engine_not_found(engine: &[u8]) -> String {
    format!("ERR Engine '{}' not found", String::from_utf8_lossy(engine))
}

// ---- compiling and running ----
/// A Lua error object that carried no message.
pub const LUA_UNKNOWN_ERROR: &str = "ERR unknown error";
pub const SCRIPT_KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";
pub const FUNCTIONS_NONE_REGISTERED: &str = "ERR No functions registered";
pub const FUNCTION_LOAD_TIMEOUT: &str = "FUNCTION LOAD timeout";
pub const NOTBUSY: &str = "NOTBUSY No scripts in execution right now.";
pub const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";

// Lua's messages are bytes (a script's source may hold any byte, and Redis passes them on),
// so these build byte strings.

/// `ERR Error compiling script (new function): <lua message>`
pub fn script_compile(msg: &[u8]) -> Vec<u8> {
    [&b"ERR Error compiling script (new function): "[..], msg].concat()
}

/// `ERR Error compiling function: <lua message>`
pub fn function_compile(msg: &[u8]) -> Vec<u8> {
    [&b"ERR Error compiling function: "[..], msg].concat()
}

/// `ERR Error registering functions: <message>`
pub fn functions_register(msg: &[u8]) -> Vec<u8> {
    [&b"ERR Error registering functions: "[..], msg].concat()
}

/// `ERR Error running script <name>, <message>`: a Lua error that is not a Redis error
/// table (out of memory, a runtime error without the table). Redis prints the message with
/// `%.100s`: at most 100 bytes, and no further than a NUL.
pub fn script_run(name: &str, msg: &[u8]) -> Vec<u8> {
    let msg = &msg[..msg.len().min(100)];
    let msg = &msg[..msg.iter().position(|&c| c == 0).unwrap_or(msg.len())];
    [
        format!("ERR Error running script {}, ", name).as_bytes(),
        msg,
    ]
    .concat()
}

/// Appends where a script's error was raised: `<error> script: <name>, on <source>:<line>.`
pub fn append_script_location(msg: &mut Vec<u8>, name: &str, source: &[u8], line: &[u8]) {
    msg.extend_from_slice(format!(" script: {}, on ", name).as_bytes());
    msg.extend_from_slice(source);
    msg.push(b':');
    msg.extend_from_slice(line);
    msg.push(b'.');
}

/// `BUSY <Redis|Valkey> is busy running a script. You can only call <SCRIPT|FUNCTION> KILL or
/// SHUTDOWN NOSAVE.`
pub fn busy(title: &str, kill_command: &str) -> String {
    format!(
        "BUSY {title} is busy running a script. You can only call {kill_command} KILL or SHUTDOWN NOSAVE."
    )
}

/// `CROSSSLOT` for a script whose declared keys hash to different slots with
/// `allow-cross-slot-keys` unset.
pub fn script_crossslot(key: &[u8], first: &[u8]) -> String {
    format!(
        "CROSSSLOT strict keys: key '{}' is in a different hash slot than '{}'",
        super::clip(key, 128),
        super::clip(first, 128)
    )
}

// ---- FUNCTION ----
/// `ERR Library '<name>' already exists`
pub fn library_exists(name: &str) -> String {
    format!("ERR Library '{}' already exists", name)
}

/// `ERR Library <name> already exists`: FUNCTION RESTORE prints the name unquoted.
pub fn library_exists_unquoted(name: &str) -> String {
    format!("ERR Library {} already exists", name)
}

/// `ERR Function <name> already exists`
pub fn function_exists(name: &str) -> String {
    format!("ERR Function {} already exists", name)
}

/// `ERR Unknown option given: <option>` (FUNCTION LOAD).
pub fn function_load_option(option: &[u8]) -> String {
    format!("ERR Unknown option given: {}", super::c_str(option))
}

/// `ERR Unknown argument <arg>` (FUNCTION LIST).
pub fn function_list_argument(arg: &[u8]) -> String {
    format!("ERR Unknown argument {}", super::c_str(arg))
}

// ---- the redis.* library inside scripts ----
// Raised as Lua errors: a script can catch them with pcall, and they reach the client
// with the script's name and line appended.
pub const LUA_CALL_NO_ARGS: &str = "Please specify at least one argument for this redis lib call";
pub const LUA_CALL_BAD_ARGS: &str = "Lua redis lib command arguments must be strings or integers";
pub const LUA_CALL_OUTSIDE_SCRIPT: &str = "redis.call can only be used while a script runs";
pub const LUA_WRONG_ARGS_OR_TYPE: &str = "wrong number or type of arguments";
pub const LUA_LOG_ARGS: &str = "redis.log() requires two arguments or more.";
pub const LUA_LOG_LEVEL_NOT_NUMBER: &str = "First argument must be a number (log level).";
pub const LUA_LOG_LEVEL_INVALID: &str = "Invalid debug level.";
pub const LUA_SETRESP_ARGS: &str = "redis.setresp() requires one argument.";
pub const LUA_SETRESP_VERSION: &str = "RESP version must be 2 or 3.";
pub const LUA_SET_REPL_ARGS: &str = "redis.set_repl() requires two arguments.";
pub const LUA_SET_REPL_FLAGS: &str =
    "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.";
pub const LUA_ACL_CHECK_CMD_INVALID: &str = "Invalid command passed to redis.acl_check_cmd()";
pub const LUA_READONLY_TABLE: &str = "Attempt to modify a readonly table";
/// Followed by the variable's name and a closing quote.
pub const LUA_NONEXISTENT_GLOBAL: &str = "Script attempted to access nonexistent global variable '";
pub const LUA_REGISTER_SINGLE_ARG: &str = "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).";
pub const LUA_REGISTER_UNKNOWN_ARG: &str = "unknown argument given to redis.register_function";
pub const LUA_REGISTER_NO_CALLBACK: &str = "redis.register_function must get a callback argument";
pub const LUA_REGISTER_ARGS: &str = "wrong number of arguments to redis.register_function";
pub const LUA_REGISTER_DUPLICATE: &str = "Function already exists in the library";

// The same texts as Valkey 8.0 words them (`lua::texts`): `server.*` for the API's name, and
// a few rephrased.
pub const LUA_CALL_NO_ARGS_VALKEY: &str = "Please specify at least one argument for this call";
pub const LUA_CALL_BAD_ARGS_VALKEY: &str = "Command arguments must be strings or integers";
pub const LUA_LOG_ARGS_VALKEY: &str = "server.log() requires two arguments or more.";
pub const LUA_LOG_LEVEL_INVALID_VALKEY: &str = "Invalid log level.";
pub const LUA_SETRESP_ARGS_VALKEY: &str = "server.setresp() requires one argument.";
/// Valkey also fixed the count: Redis says "two arguments" and checks for one.
pub const LUA_SET_REPL_ARGS_VALKEY: &str = "server.set_repl() requires one argument.";
pub const LUA_ACL_CHECK_CMD_INVALID_VALKEY: &str =
    "Invalid command passed to server.acl_check_cmd()";
pub const LUA_REGISTER_SINGLE_ARG_VALKEY: &str = "calling server.register_function with a single argument is only applicable to Lua table (representing named arguments).";
pub const LUA_REGISTER_UNKNOWN_ARG_VALKEY: &str =
    "unknown argument given to server.register_function";
pub const LUA_REGISTER_NO_CALLBACK_VALKEY: &str =
    "server.register_function must get a callback argument";
pub const LUA_REGISTER_ARGS_VALKEY: &str = "wrong number of arguments to server.register_function";
pub const LUA_REGISTER_OUTSIDE_LOAD: &str =
    "redis.register_function can only be called on FUNCTION LOAD command";
pub const LUA_REGISTER_OUTSIDE_LOAD_VALKEY: &str =
    "server.register_function can only be called on FUNCTION LOAD command";
pub const LUA_REGISTER_NAME_NOT_STRING: &str =
    "function_name argument given to redis.register_function must be a string";
pub const LUA_REGISTER_NAME_NOT_STRING_VALKEY: &str =
    "function_name argument given to server.register_function must be a string";
pub const LUA_REGISTER_DESCRIPTION_NOT_STRING: &str =
    "description argument given to redis.register_function must be a string";
pub const LUA_REGISTER_DESCRIPTION_NOT_STRING_VALKEY: &str =
    "description argument given to server.register_function must be a string";
pub const LUA_REGISTER_CALLBACK_NOT_FUNCTION: &str =
    "callback argument given to redis.register_function must be a function";
pub const LUA_REGISTER_CALLBACK_NOT_FUNCTION_VALKEY: &str =
    "callback argument given to server.register_function must be a function";
pub const LUA_REGISTER_NO_NAME: &str = "redis.register_function must get a function name argument";
pub const LUA_REGISTER_NO_NAME_VALKEY: &str =
    "server.register_function must get a function name argument";
pub const LUA_REGISTER_FIRST_NOT_STRING: &str =
    "first argument to redis.register_function must be a string";
pub const LUA_REGISTER_FIRST_NOT_STRING_VALKEY: &str =
    "first argument to server.register_function must be a string";
pub const LUA_REGISTER_SECOND_NOT_FUNCTION: &str =
    "second argument to redis.register_function must be a function";
pub const LUA_REGISTER_SECOND_NOT_FUNCTION_VALKEY: &str =
    "second argument to server.register_function must be a function";
pub const LUA_REGISTER_FLAGS_NOT_TABLE: &str =
    "flags argument to redis.register_function must be a table representing function flags";
pub const LUA_REGISTER_FLAGS_NOT_TABLE_VALKEY: &str =
    "flags argument to server.register_function must be a table representing function flags";
/// Valkey checks a function's name when the library's functions are created, after its code
/// ran, and answers this without "Error registering functions".
pub const FUNCTION_NAME_INVALID_VALKEY: &str = "ERR Function names can only contain letters, numbers, or underscores(_) and must be at least one character long";
pub const FUNCTION_DUPLICATE_VALKEY: &str = "ERR Function already exists in the library";
/// Valkey 8 looks the shebang's engine up by name (case-insensitively) after reading its
/// options: `ERR Could not find scripting engine '<name>'`.
pub fn shebang_engine_valkey(engine: &[u8]) -> String {
    format!(
        "ERR Could not find scripting engine '{}'",
        String::from_utf8_lossy(engine)
    )
}
/// The shebang line could not be split (an unbalanced quote).
pub const SHEBANG_ENGINE_INVALID: &str = "ERR Invalid engine in script shebang";

// ---- redis.call refusals ----
pub const SCRIPT_UNKNOWN_COMMAND: &str = "Unknown Redis command called from script";
pub const SCRIPT_UNKNOWN_COMMAND_VALKEY: &str = "Unknown command called from script";
pub const SCRIPT_ARITY: &str = "Wrong number of args calling Redis command from script";
pub const SCRIPT_ARITY_VALKEY: &str = "Wrong number of args calling command from script";
pub const SCRIPT_NOT_ALLOWED: &str = "This Redis command is not allowed from script";
pub const SCRIPT_CLUSTER_DOWN_READONLY: &str =
    "Script attempted to execute a write command while the cluster is down and readonly";
pub const SCRIPT_CLUSTER_DOWN: &str =
    "Script attempted to execute a command while the cluster is down";
pub const SCRIPT_NON_LOCAL_KEY: &str =
    "Script attempted to access a non local key in a cluster node";
pub const SCRIPT_WRITE_IN_READ_ONLY: &str =
    "Write commands are not allowed from read-only scripts.";

/// The library-name rule as FUNCTION LOAD's reply states it.
pub fn library_name_invalid() -> String {
    format!("ERR {}", LIBRARY_NAME_RULE)
}
pub const LUA_REGISTER_UNKNOWN_FLAG: &str = "unknown flag given";

/// redlab's own: a script with the `strict-keys` check on touched a key it did not declare,
/// which Redis Cluster could not route.
pub fn script_undeclared_key(key: &[u8]) -> String {
    format!(
        "ERR strict keys: script accessed key '{}' that was not declared in KEYS (Redis Cluster cannot route it)",
        super::clip(key, 128)
    )
}
/// What `script_run` names when Lua gave no message: out of memory, or none at all.
pub const LUA_NOT_ENOUGH_MEMORY: &str = "not enough memory";
pub const LUA_EXECUTION_FAILURE: &str = "execution failure";
pub const LUA_ACL_CHECK_OUTSIDE_SCRIPT: &str =
    "redis.acl_check_cmd can only be used while a script runs";

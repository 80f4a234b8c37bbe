use crate::config::Config;
use crate::engine::Engine;
use crate::reply::Reply;

fn eval(e: &mut Engine, args: &[&str]) -> Reply {
    let mut v = vec!["EVAL"];
    v.extend_from_slice(args);
    e.execute(1, &v)
}

#[test]
fn eval_returns_values() {
    let mut e = Engine::new(Config::default());
    assert_eq!(eval(&mut e, &["return 1", "0"]), Reply::Int(1));
    assert_eq!(eval(&mut e, &["return {1,'a',{ok='x'}}", "0"]), Reply::Array(vec![Reply::Int(1), Reply::bulk("a"), Reply::status("x")]));
    assert_eq!(eval(&mut e, &["redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])", "1", "k", "v"]), Reply::bulk("v"));
}

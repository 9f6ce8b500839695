//! A `wasi:cli` command component: valid WebAssembly of another world, which the loader must
//! refuse as "not a tool", and what `Runtime::command` runs (a tool's test binary is one):
//! `exit CODE`, `loop`, `read PATH` and `env NAME` do what they say; anything else prints.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |index: usize| args.get(index).map(String::as_str).unwrap_or_default();
    match arg(1) {
        "exit" => std::process::exit(arg(2).parse().unwrap_or(2)),
        "loop" => loop {
            std::hint::black_box(());
        },
        "read" => match std::fs::read_to_string(arg(2)) {
            Ok(text) => println!("read {} bytes", text.len()),
            Err(err) => {
                eprintln!("cannot read {}: {err}", arg(2));
                std::process::exit(1);
            }
        },
        "env" => println!("{}={:?}", arg(2), std::env::var(arg(2)).ok()),
        _ => println!("I am a command, not a tool"),
    }
}

//! A `wasi:cli` command component: valid WebAssembly of another world, which the loader must
//! refuse as "not a tool".

fn main() {
    println!("I am a command, not a tool");
}

//! Builds the test guests (`guests/examples/*.rs`, plus a `wasi:cli` command from
//! `guests/src/bin`) as components into `$OUT_DIR/guests/`.

use std::fmt::Write as _;

use toolcell_guest_build::{GuestBuild, path_constants};

fn main() {
    let artifacts = GuestBuild::new().package("toolcell-test-guests").examples().bins().run("guests", str::to_owned);
    println!("cargo:rerun-if-changed=guests");
    let mut code = path_constants(&artifacts);
    // `foreach_guest!(m)` calls `m!(name)` for every guest, so the suite can require a test
    // per guest: adding a guest without one fails to compile.
    code.push_str("/// Calls `$m!(guest_name)` for every test guest.\n#[macro_export]\nmacro_rules! foreach_guest {\n    ($m:ident) => {\n");
    for artifact in &artifacts {
        let _ = writeln!(code, "        $m!({});", artifact.target_name);
    }
    code.push_str("    };\n}\n");
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR is set for build scripts");
    std::fs::write(format!("{out_dir}/guests.rs"), code).expect("write guests.rs");
}

//! Builds the benchmark's tools (`guests/examples/*.rs`) into `$OUT_DIR/guests/`.

use toolcell_guest_build::{GuestBuild, path_constants};

fn main() {
    let artifacts = GuestBuild::new().package("toolcell-bench-guests").examples().run("guests", str::to_owned);
    println!("cargo:rerun-if-changed=guests");
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR is set for build scripts");
    std::fs::write(format!("{out_dir}/guests.rs"), path_constants(&artifacts)).expect("write guests.rs");
}

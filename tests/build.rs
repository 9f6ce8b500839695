//! Builds the test guests (`guests/examples/*.rs`, plus a `wasi:cli` command from
//! `guests/src/bin`) as components into `$OUT_DIR/guests/`, and assembles the ones written
//! in the component text format (`guests/wat/*.wat`), and one mock tool per operation of
//! `guests/api/api.json` into `$OUT_DIR/api-tools/` (see `build/api_tools.rs`).

#[path = "build/api_tools.rs"]
mod api_tools;

use std::fmt::Write as _;
use std::path::Path;

use toolcell_guest_build::{Artifact, GuestBuild, path_constants};

fn main() {
    let mut artifacts =
        GuestBuild::new().package("toolcell-test-guests").examples().bins().run("guests", str::to_owned);
    println!("cargo:rerun-if-changed=guests");
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR is set for build scripts");
    artifacts.extend(assemble_wat_guests(Path::new("guests/wat"), &Path::new(&out_dir).join("guests")));
    let mut code = path_constants(&artifacts);
    // `foreach_guest!(m)` calls `m!(name)` for every guest, so the suite can require a test
    // per guest: adding a guest without one fails to compile.
    code.push_str("/// Calls `$m!(guest_name)` for every test guest.\n#[macro_export]\nmacro_rules! foreach_guest {\n    ($m:ident) => {\n");
    for artifact in &artifacts {
        let _ = writeln!(code, "        $m!({});", artifact.target_name);
    }
    code.push_str("    };\n}\n");
    code.push_str(&api_tools_constant(Path::new(&out_dir)));
    std::fs::write(format!("{out_dir}/guests.rs"), code).expect("write guests.rs");
}

fn assemble_wat_guests(source: &Path, out: &Path) -> Vec<Artifact> {
    std::fs::create_dir_all(out).expect("create the guests folder");
    let mut guests: Vec<_> = std::fs::read_dir(source)
        .expect("read guests/wat")
        .map(|entry| entry.expect("read guests/wat").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wat"))
        .collect();
    guests.sort();
    guests
        .into_iter()
        .map(|wat| {
            let name = wat.file_stem().and_then(|stem| stem.to_str()).expect("a UTF-8 file name").to_owned();
            let bytes = wat::parse_file(&wat).unwrap_or_else(|err| panic!("{}: {err}", wat.display()));
            let path = out.join(format!("{name}.wasm"));
            std::fs::write(&path, bytes).expect("write the assembled guest");
            Artifact { target_name: name, path }
        })
        .collect()
}

/// Writes the API tools and returns `pub const API_TOOLS_DIR` for the library. They stay out of
/// `foreach_guest!`: they are one mock a hundred times, tested together (tests/it/api_tools.rs).
fn api_tools_constant(out_dir: &Path) -> String {
    let dir = out_dir.join("api-tools");
    let written = api_tools::write_api_tools(Path::new("guests/api/api.json"), &dir);
    println!("cargo:rerun-if-changed=build");
    format!(
        "/// The folder of {written} mock tools, one per operation of `tests/guests/api/api.json` (an online shop's \
         back office).\npub const API_TOOLS_DIR: &str = {:?};\n",
        dir
    )
}

//! `toolcell-api-tools DIR`: copies the hundred mock API tools this crate's build script
//! generates (`toolcell_tests::API_TOOLS_DIR`) into DIR, for tests outside cargo
//! (tests/peers/run counts their `tools/list` in tokens).

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(dest), None) = (args.next(), args.next()) else {
        eprintln!("usage: toolcell-api-tools DIR (copies the generated API tools into DIR)");
        return ExitCode::from(2);
    };
    match copy_tools(Path::new(toolcell_tests::API_TOOLS_DIR), Path::new(&dest)) {
        Ok(copied) => {
            println!("{copied} tools in {}", Path::new(&dest).display());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!(
                "toolcell-api-tools: {err}; rebuild them with `cargo build -p toolcell-tests`, check DIR is writable"
            );
            ExitCode::FAILURE
        }
    }
}

/// Copies every `.wasm` file of `source` into `dest` (created if missing); returns how many.
fn copy_tools(source: &Path, dest: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dest)
        .map_err(|err| std::io::Error::new(err.kind(), format!("cannot create {}: {err}", dest.display())))?;
    let mut copied = 0;
    let entries = std::fs::read_dir(source)
        .map_err(|err| std::io::Error::new(err.kind(), format!("cannot read {}: {err}", source.display())))?;
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "wasm") {
            std::fs::copy(&path, dest.join(path.file_name().unwrap_or_default()))?;
            copied += 1;
        }
    }
    Ok(copied)
}

//! Opens the same file in its granted directory again and again and keeps every one open
//! (or only a stream through each, or closes each at once), optionally holding them for a
//! while: the host must bound the file descriptors one call, and all calls, hold.

use toolcell_guest::{ToolError, tool};

/// Opens `/data/file.txt` `count` times.
#[tool(dirs = ["/data"])]
fn fd_hog(
    /// How many times to open it.
    count: u32,
    /// `keep` every descriptor, keep only a `stream` through each, or `close` each at once.
    mode: String,
    /// How long to hold what is open before returning, in milliseconds.
    hold_ms: Option<u64>,
) -> Result<u32, ToolError> {
    open(count, &mode, std::time::Duration::from_millis(hold_ms.unwrap_or(0)))
}

#[cfg(target_arch = "wasm32")]
fn open(count: u32, mode: &str, hold: std::time::Duration) -> Result<u32, ToolError> {
    use wasip2::filesystem::preopens::get_directories;
    use wasip2::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};

    let Some((dir, _)) = get_directories().into_iter().find(|(_, path)| path == "/data") else {
        return Err(ToolError::failed("no /data"));
    };
    let (mut files, mut streams) = (Vec::new(), Vec::new());
    for i in 0..count {
        let file = dir
            .open_at(PathFlags::empty(), "file.txt", OpenFlags::empty(), DescriptorFlags::READ)
            .map_err(|err| ToolError::failed(format!("open number {} failed: {err:?}", i + 1)))?;
        match mode {
            "keep" => files.push(file),
            "stream" => streams.push(file.read_via_stream(0).map_err(|err| ToolError::failed(format!("{err:?}")))?),
            _ => drop(file),
        }
    }
    std::thread::sleep(hold);
    drop((files, streams));
    Ok(count)
}

#[cfg(not(target_arch = "wasm32"))]
fn open(_: u32, _: &str, _: std::time::Duration) -> Result<u32, ToolError> {
    Err(ToolError::failed("wasm32 only"))
}

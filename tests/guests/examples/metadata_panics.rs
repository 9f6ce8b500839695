//! A tool that panics while describing itself.

use toolcell_guest::{Context, Metadata, Tool, ToolError, export};

struct MetadataPanics;

impl Tool for MetadataPanics {
    fn metadata() -> Metadata {
        panic!("cannot describe myself")
    }

    fn invoke(_arguments: &str, _context: Context) -> Result<String, ToolError> {
        Ok("null".into())
    }
}

export!(MetadataPanics);

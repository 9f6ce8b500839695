//! The compile errors a tool author sees for signatures a tool cannot have, and a tool using
//! every feature that compiles and describes itself correctly.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}

//! The benchmark's tools are its examples, one component each.

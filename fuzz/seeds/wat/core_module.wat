(module (func (export "f") (result i32) i32.const 1))

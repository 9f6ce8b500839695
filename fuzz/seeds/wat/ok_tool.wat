;; A minimal well-behaved tool in the component text format: `invoke` returns `{}`.
;; A seed for the `component` fuzz target (assembled into ../component/ok_tool.wasm).
(component
  (core module $m
    (memory (export "memory") 1)
    (global $next (mut i32) (i32.const 4096))
    ;; A bump allocator: enough for the canonical ABI to pass the arguments in.
    (func (export "realloc") (param i32 i32 i32) (param $size i32) (result i32)
      (local $at i32)
      (local.set $at (i32.and (i32.add (global.get $next) (i32.const 7)) (i32.const -8)))
      (global.set $next (i32.add (local.get $at) (local.get $size)))
      (local.get $at))
    (data (i32.const 16) "wat_ok")
    (data (i32.const 32) "Returns an empty object always")
    (data (i32.const 64) "1.0.0")
    (data (i32.const 80) "{\"type\":\"object\"}")
    ;; tool-metadata: four (pointer, length) strings, then option<string> = none.
    (data (i32.const 1024)
      "\10\00\00\00" "\06\00\00\00"
      "\20\00\00\00" "\1e\00\00\00"
      "\40\00\00\00" "\05\00\00\00"
      "\50\00\00\00" "\11\00\00\00"
      "\00\00\00\00" "\00\00\00\00" "\00\00\00\00")
    (func (export "metadata") (result i32) (i32.const 1024))
    (data (i32.const 2100) "{}")
    ;; result<string, tool-error>: discriminant 0 (ok), then the string's pointer and length.
    (data (i32.const 2048) "\00\00\00\00" "\34\08\00\00" "\02\00\00\00")
    (func (export "invoke") (param i32 i32 i32 i32 i32 i32) (result i32) (i32.const 2048))
  )
  (core instance $i (instantiate $m))

  (type $metadata-type (record
    (field "name" string)
    (field "description" string)
    (field "version" string)
    (field "parameters-schema" string)
    (field "output-schema" (option string))))
  (export $metadata "tool-metadata" (type $metadata-type))
  (type $context-type (record (field "call-id" string) (field "host-context" string)))
  (export $context "call-context" (type $context-type))
  (type $failure-type (record (field "message" string) (field "retryable" bool)))
  (export $failure "failure" (type $failure-type))
  (type $error-type (variant (case "invalid-arguments" string) (case "failed" $failure)))
  (export $error "tool-error" (type $error-type))

  (func $metadata-func (result $metadata)
    (canon lift (core func $i "metadata") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (export "metadata" (func $metadata-func))
  (func $invoke-func (param "arguments" string) (param "context" $context) (result (result string (error $error)))
    (canon lift (core func $i "invoke") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (export "invoke" (func $invoke-func))
)

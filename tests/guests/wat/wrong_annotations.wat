;; A 0.1.0 tool that also exports a function named `annotations` of the wrong type (no
;; result instead of a `tool-annotations` record), as a tool built against a different
;; contract might: the loader must refuse it and say to rebuild with the current SDK.
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
    (data (i32.const 16) "wrong_annotations")
    (data (i32.const 48) "Exports a mistyped annotations.")
    (data (i32.const 96) "1.0.0")
    (data (i32.const 112) "{\"type\":\"object\"}")
    ;; tool-metadata: four (pointer, length) strings, then option<string> = none.
    (data (i32.const 1024)
      "\10\00\00\00" "\11\00\00\00"
      "\30\00\00\00" "\1f\00\00\00"
      "\60\00\00\00" "\05\00\00\00"
      "\70\00\00\00" "\11\00\00\00"
      "\00\00\00\00" "\00\00\00\00" "\00\00\00\00")
    (func (export "metadata") (result i32) (i32.const 1024))
    (func (export "invoke") (param i32 i32 i32 i32 i32 i32) (result i32) unreachable)
    (func (export "annotations"))
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
  (func $annotations-func (canon lift (core func $i "annotations")))
  (export "annotations" (func $annotations-func))
)

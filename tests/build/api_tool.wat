;; One mock API tool (tests/build/api_tools.rs fills in the braces): `metadata`,
;; `capabilities`, `annotations` and `invoke` each return a record laid out in the data
;; segments; `invoke` ignores its arguments and answers the operation's canned result.
(component
  (core module $m
    (memory (export "memory") {pages})
    (global $next (mut i32) (i32.const {heap}))
    ;; A bump allocator that grows memory: each call runs in a fresh instance, so nothing is freed.
    (func (export "realloc") (param i32 i32) (param $align i32) (param $size i32) (result i32)
      (local $at i32) (local $end i32)
      (local.set $at (i32.and (i32.add (global.get $next) (i32.const 7)) (i32.const -8)))
      (local.set $end (i32.add (local.get $at) (local.get $size)))
      (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
        (then
          (if (i32.eq (i32.const -1)
                (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $end) (i32.mul (memory.size) (i32.const 65536))) (i32.const 65535)) (i32.const 16))))
            (then unreachable))))
      (global.set $next (local.get $end))
      (local.get $at))
{data}
    (func (export "metadata") (result i32) (i32.const {metadata}))
    (func (export "capabilities") (result i32) (i32.const {capabilities}))
    (func (export "annotations") (result i32) (i32.const {annotations}))
    (func (export "invoke") (param i32 i32 i32 i32 i32 i32) (result i32) (i32.const {invoke}))
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
  (type $directory-type (record (field "guest-path" string) (field "writable" bool)))
  (export $directory "directory-request" (type $directory-type))
  (type $capabilities-type (record
    (field "http-hosts" (list string))
    (field "directories" (list $directory))
    (field "env" (list string))))
  (export $capabilities "capability-request" (type $capabilities-type))
  (type $annotations-type (record
    (field "title" (option string))
    (field "read-only" (option bool))
    (field "destructive" (option bool))
    (field "idempotent" (option bool))
    (field "open-world" (option bool))))
  (export $annotations "tool-annotations" (type $annotations-type))

  (func $metadata-func (result $metadata)
    (canon lift (core func $i "metadata") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (export "metadata" (func $metadata-func))
  (func $capabilities-func (result $capabilities)
    (canon lift (core func $i "capabilities") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (export "capabilities" (func $capabilities-func))
  (func $annotations-func (result $annotations)
    (canon lift (core func $i "annotations") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (export "annotations" (func $annotations-func))
  (func $invoke-func (param "arguments" string) (param "context" $context) (result (result string (error $error)))
    (canon lift (core func $i "invoke") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (export "invoke" (func $invoke-func))
)

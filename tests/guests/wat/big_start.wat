;; A tool whose memory is 132 MiB from the start (2,112 pages, as a start-up that grows its
;; heap would leave it): more than one instance made ready before its call may hold, so it
;; must never have one kept ready, and each call makes its own. Answers 1.
(component
  (core module $m
    (memory (export "memory") 2112)
    (global $next (mut i32) (i32.const 4096))
    ;; A bump allocator: enough for the canonical ABI to pass the arguments in.
    (func (export "realloc") (param i32 i32 i32) (param $size i32) (result i32)
      (local $at i32)
      (local.set $at (i32.and (i32.add (global.get $next) (i32.const 7)) (i32.const -8)))
      (global.set $next (i32.add (local.get $at) (local.get $size)))
      (local.get $at))
    (data (i32.const 16) "big_start")
    (data (i32.const 32) "Starts with 132 MiB of memory.")
    (data (i32.const 64) "1.0.0")
    (data (i32.const 80) "{\"type\":\"object\"}")
    (data (i32.const 112) "1")
    ;; tool-metadata: four (pointer, length) strings, then option<string> = none.
    (data (i32.const 1024)
      "\10\00\00\00" "\09\00\00\00"
      "\20\00\00\00" "\1e\00\00\00"
      "\40\00\00\00" "\05\00\00\00"
      "\50\00\00\00" "\11\00\00\00"
      "\00\00\00\00" "\00\00\00\00" "\00\00\00\00")
    ;; result<string, tool-error> = ok("1"): the case, then the string's (pointer, length).
    (data (i32.const 2048) "\00\00\00\00" "\70\00\00\00" "\01\00\00\00")
    (func (export "metadata") (result i32) (i32.const 1024))
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

#!/usr/bin/env bash
# Where a call's time goes: runs the `stages` benchmark under callgrind, which counts the
# instructions each stage of a call executes (stable on a noisy machine, unlike time), then
# the same calls natively for wall-clock, user and kernel time.
#
#   runtime/benches/stages.sh [TOOL] [CALLS]     (default: calculator 200)
#
# Needs valgrind. Callgrind runs the on-demand allocator: the pool's address-space
# reservation does not fit under valgrind. The pooled path runs the same code but for how
# memory is reset, which is kernel and memset time that instruction counts do not show;
# the native run below measures both allocators.
set -euo pipefail
cd "$(dirname "$0")/../.."
tool="${1:-calculator}"
calls="${2:-200}"

bench=$(cargo bench -p toolcell-runtime --bench stages --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))$/\1/p')
[ -x "$bench" ] || { echo "stages.sh: could not build the stages benchmark" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "stages.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --smc-check=all-non-file --toggle-collect='stages::measured_calls' \
    --callgrind-out-file="$out/callgrind.out" "$bench" --bench --on-demand "$tool" "$calls" >"$out/valgrind.log" 2>&1 \
    || { cat "$out/valgrind.log" >&2; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 "$out/callgrind.out" >"$out/annotated.txt" 2>/dev/null
# Exclusive instructions in code no file holds: the guest's compiled wasm.
guest=$(callgrind_annotate --threshold=100 "$out/callgrind.out" 2>/dev/null \
    | awk '/^ *[0-9,]+ .*\[\?\?\?\]$/ { gsub(",", "", $1); sum += $1 } END { print sum + 0 }')

# Inclusive instructions of the first function whose name matches each pattern.
awk -v calls="$calls" -v tool="$tool" -v guest="$guest" '
    function ir(line) { gsub(",", "", line); split(line, fields, " "); return fields[1] + 0 }
    function stage(name, pattern,    i) {
        for (i = 1; i <= n; i++) if (index(names[i], pattern)) { return costs[i] }
        return 0
    }
    /^ *[0-9,]+ \(/ { n++; costs[n] = ir($0); names[n] = $0 }
    END {
        total = stage("", "stages::measured_calls")
        validate = stage("", "toolcell_runtime::runtime::parse_and_validate")
        sandbox = stage("", "toolcell_runtime::sandbox::Sandbox::new") + stage("", "wasmtime::runtime::store::Store<T>::new")
        instantiate = stage("", "ToolCorePre<_T>::instantiate_async")
        startup = stage("", "wasmtime::runtime::instance::Instance::start_raw")
        invoke = stage("", "TypedFunc<Params,Return>::call_impl")
        checks = stage("", "toolcell_runtime::runtime::classify") + stage("", "toolcell_runtime::output::check_output") + stage("", "toolcell_runtime::runtime::redact")
        teardown = stage("", "drop_in_place<wasmtime::runtime::store::StoreInner<toolcell_runtime::sandbox::Sandbox>>")
        rest = total - validate - sandbox - instantiate - invoke - checks - teardown
        printf "instructions per call of %s (callgrind, %d calls, on-demand allocator):\n\n", tool, calls
        printf "| stage | instructions | share |\n|---|---:|---:|\n"
        row("parse and validate the arguments", validate)
        row("sandbox: store, WASI context, limits", sandbox)
        row("instantiate (guest start-up included)", instantiate)
        row("  of which guest start-up", startup)
        row("first call into the instance: lower arguments, run the guest, lift the result", invoke)
        row("  of which the guest's own code", guest)
        row("result checks: classify, output schema, redaction", checks)
        row("teardown: drop the store and instance", teardown)
        row("the rest: admission, span, metrics, timeout, the async executor", rest)
        row("total", total)
    }
    function row(label, cost) { printf "| %s | %d | %.1f%% |\n", label, cost / calls, 100 * cost / total }
' "$out/annotated.txt"

echo
echo "time per call, natively (2000 calls):"
"$bench" --bench "$tool" 2000
"$bench" --bench --on-demand "$tool" 2000

#!/bin/sh
# How `make check` runs a suite and sums them up, so that its output is one line per suite and one
# summary line, whatever mix of cmocka programs and shell suites it runs.
#
#   sh tests/run_suite.sh LOGDIR NAME COMMAND [ARG...]
#       Runs COMMAND with its output in LOGDIR/NAME.log, writes "PASSED FAILED SKIPPED" to
#       LOGDIR/NAME.result and prints one line. Exits 0 even when the suite fails, so that make
#       runs the other suites (in parallel) before the summary.
#   sh tests/run_suite.sh --summary LOGDIR NAME...
#       Prints the log of each suite that failed, then "N passed, M failed (...)"; exits 1 if any
#       test failed or a suite left no result.
#
# Counts: cmocka prints "[  PASSED  ] N test(s)." and, when some fail, "[  FAILED  ] N test(s),
# listed below:" once per group of tests; the shell suites end with "NAME: N passed, M failed".
# A suite that exits non-zero without counting a failure (a crash, a sanitizer's abort, a missing
# binary) counts as one failed test, and so does one that counts nothing: neither passes unnoticed.

if [ "$1" = --summary ]; then
    dir=$2
    shift 2
    pass=0 fail=0 skip=0 suites=0 bad=""
    for name in "$@"; do
        suites=$((suites + 1))
        if [ -r "$dir/$name.result" ] && read -r p f s <"$dir/$name.result"; then
            pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
            [ "$f" -eq 0 ] || bad="$bad $name"
        else
            fail=$((fail + 1)) bad="$bad $name"
            echo "$name: no result in $dir/$name.result (did the suite run?)"
        fi
    done
    for name in $bad; do
        if [ -r "$dir/$name.log" ]; then
            echo "==== $name failed: $dir/$name.log"
            cat "$dir/$name.log"
            echo "==== end of $name"
        fi
    done
    extra=""
    [ "$skip" -eq 0 ] || extra="$skip skipped; "
    echo "$pass passed, $fail failed (${extra}$suites suites, logs in $dir/)"
    [ "$fail" -eq 0 ]
    exit
fi

dir=$1 name=$2
shift 2
mkdir -p "$dir"
log=$dir/$name.log
rm -f "$dir/$name.result"
start=$(date +%s.%N)
"$@" >"$log" 2>&1 </dev/null
rc=$?
end=$(date +%s.%N)

# cmocka's per-group counts, else the shell suite's last "N passed, M failed"
set -- $(awk '
    /^\[  PASSED  \] [0-9]+ test\(s\)/ { p += $4; cm = 1 }
    /^\[  FAILED  \] [0-9]+ test\(s\)/ { f += $4; cm = 1 }
    /^\[  SKIPPED \] [0-9]+ test\(s\)/ { s += $4; cm = 1 }
    match($0, /[0-9]+ passed, [0-9]+ failed/) {
        split(substr($0, RSTART, RLENGTH), w, " "); sp = w[1]; sf = w[3]; sh = 1
    }
    END {
        if (cm) print p + 0, f + 0, s + 0
        else if (sh) print sp + 0, sf + 0, 0
        else print 0, 0, 0
    }' "$log")
pass=$1 fail=$2 skip=$3
note=""
if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
    fail=1
    note=" (exit status $rc)"
fi
if [ "$pass" -eq 0 ] && [ "$fail" -eq 0 ]; then
    fail=1
    note=" (no count in its output)"
fi
echo "$pass $fail $skip" >"$dir/$name.result"
extra=""
[ "$skip" -eq 0 ] || extra=", $skip skipped"
printf '%-28s %5d passed, %d failed%s%s  %5.1f s\n' "$name" "$pass" "$fail" "$extra" "$note" \
    "$(echo "$start $end" | awk '{ print $2 - $1 }')"
exit 0

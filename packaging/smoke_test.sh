#!/usr/bin/env bash
# Smoke test of the standalone bundle, run by `make bundle` after PyInstaller:
#
#     bash packaging/smoke_test.sh dist/mha-gui/mha-gui
#
# Runs the bundled program the way a machine without Python would: an empty environment
# (env -i: no PYTHONPATH, no venv, no PATH beyond /usr/bin:/bin, HOME in a temp folder).
# As root (CI), it also runs inside a private mount namespace where the Python
# installations it can find (the standard library and site-packages folders named in
# MHA_SMOKE_HIDE, set by the Makefile, and the system's /usr/lib/python3*) are covered
# by empty folders, so a bundle that reached for them would fail. Checks: `presets`,
# `info`, the resources in the bundle, an export of every format with the right magic
# bytes, two bad inputs (exit 2, one stderr line `mha-gui: error: ...`, no file left),
# and the window staying up 3 s offscreen.
set -uo pipefail

exe=${1:?usage: smoke_test.sh PATH/TO/dist/mha-gui/mha-gui}
exe=$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")
[[ -x $exe ]] || { echo "smoke test: $exe is not an executable" >&2; exit 1; }

# Hide the Python installations, once, when we may (root and a working unshare).
if [[ -z ${MHA_SMOKE_INNER:-} ]] && [[ $(id -u) == 0 ]] &&
    unshare --mount --propagation private true 2>/dev/null; then
    MHA_SMOKE_INNER=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
hidden=()
if [[ -n ${MHA_SMOKE_INNER:-} ]]; then
    for dir in ${MHA_SMOKE_HIDE:-} /usr/lib/python3*; do
        [[ -d $dir ]] || continue
        case $(basename "$dir") in python3* | site-packages) ;; *) continue ;; esac
        case $exe in "$dir"/*) continue ;; esac # never hide the bundle itself
        mount -t tmpfs -o ro,size=4k none "$dir" && hidden+=("$dir")
    done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/out"
failures=0

run() { # the bundled program with nothing of this shell's environment
    timeout 120 env -i PATH=/usr/bin:/bin HOME="$tmp/home" LANG=C.UTF-8 \
        QT_QPA_PLATFORM=offscreen "$exe" "$@"
}
passes=0
pass() {
    printf '  ok    %s\n' "$*"
    passes=$((passes + 1))
}
fail() {
    printf '  FAIL  %s\n' "$*"
    failures=$((failures + 1))
}
hex() { head -c "$2" "$1" | od -An -tx1 | tr -d ' \n'; } # first $2 bytes of $1, in hex

echo "smoke test of $exe ($(du -sh "$(dirname "$exe")" | cut -f1) on disk)"
if ((${#hidden[@]})); then
    echo "  Python hidden from the program: ${hidden[*]}"
else
    echo "  (not root or no unshare: Python installations stay visible; env -i only)"
fi

# -- presets, info, --version ------------------------------------------------------------
if out=$(run presets 2>"$tmp/err") && [[ $(grep -c . <<<"$out") -ge 7 ]] &&
    grep -q '^toy ' <<<"$out"; then
    pass "presets: $(grep -c . <<<"$out") presets, first: $(head -1 <<<"$out" | cut -c1-60)"
else
    fail "presets: $(head -3 <<<"$out") $(head -3 "$tmp/err")"
fi
if out=$(run info --preset toy 2>"$tmp/err") && grep -q '^parameters: 64' <<<"$out"; then
    pass "info: $(head -1 <<<"$out")"
else
    fail "info: $(head -3 <<<"$out") $(head -3 "$tmp/err")"
fi
if out=$(run --version 2>&1) && [[ $out == "mha-gui "* ]]; then
    pass "--version: $out"
else
    fail "--version: $out"
fi

# -- the run-time resources (the window icon, the built-in lessons and model) are in the bundle
resources=$(cd "$(dirname "$0")/../resources" && pwd)
while IFS= read -r src; do
    rel=${src#"$resources"/}
    case $rel in */*) ;; *.py | *.md) continue ;; esac  # top level: the icon, not the package's own files
    copy=$(find "$(dirname "$exe")" -path "*/mha_gui/resources/$rel" | head -1)
    if [[ -n $copy ]] && cmp -s "$src" "$copy"; then
        pass "resource ${copy#"$(dirname "$exe")"/}"
    else
        fail "resource $rel is not in the bundle as mha_gui/resources/$rel"
    fi
done < <(find "$resources" -type f ! -name '*.pyc' | sort)

# -- the built-in model and lessons work from the bundle ----------------------------------
if out=$("$exe" lesson walkthrough --check 2>&1) && [[ $out == ok:* ]]; then
    pass "lesson walkthrough --check: ${out:0:60}"
else
    fail "lesson walkthrough --check: $out"
fi
if out=$("$exe" heads --model builtin --probe repeated 2>&1) && [[ $out == *"prev 1.00"* ]]; then
    pass "heads --model builtin: a previous-token head"
else
    fail "heads --model builtin: $out"
fi

# -- every export format -----------------------------------------------------------------
# suffix, extra arguments, the file's first bytes in hex (or "text:<string it contains>")
exports=(
    "png||89504e470d0a1a0a"
    "svg|--stage weights|text:<svg"
    "pdf|--stage scores|255044462d"
    "gif|--query 2|474946383961"
    "tex|--stage weights|text:\\begin{document}"
    "npz||504b0304"
    "json|--stage output|text:\"mha-gui-session\""
    "pdf|--handout|255044462d"
)
for spec in "${exports[@]}"; do
    IFS='|' read -r suffix extra magic <<<"$spec"
    tag=${extra//--/}
    name=toy${tag:+-${tag// /-}}.$suffix # toy.png, toy-stage-weights.svg, toy-handout.pdf
    file=$tmp/out/$name
    # shellcheck disable=SC2086  # extra is a list of arguments
    if ! run export --preset toy $extra --out "$file" >"$tmp/log" 2>&1; then
        fail "export $name: $(tail -3 "$tmp/log")"
        continue
    fi
    if [[ ! -s $file ]]; then
        fail "export $name: missing or empty"
    elif [[ $magic == text:* ]]; then
        if grep -qF -- "${magic#text:}" "$file"; then
            pass "export $name ($(stat -c %s "$file") bytes, has ${magic#text:})"
        else
            fail "export $name: no ${magic#text:} in it"
        fi
    elif [[ $(hex "$file" $((${#magic} / 2))) == "$magic" ]]; then
        pass "export $name ($(stat -c %s "$file") bytes, starts with $magic)"
    else
        fail "export $name: starts with $(hex "$file" 8), expected $magic"
    fi
done
# The handout has one page per stage; the npz holds every intermediate.
pages=$(grep -ac '/Type /Page\b' "$tmp/out/toy-handout.pdf" 2>/dev/null)
[[ $pages == 7 ]] && pass "handout: 7 pages" || fail "handout: ${pages:-no} pages, expected 7"
if [[ -s $tmp/out/toy.npz ]]; then
    missing=""
    for key in X W_Q W_K W_V W_O Q K V scores weights heads concat output contributions; do
        grep -qa "$key.npy" "$tmp/out/toy.npz" || missing+=" $key"
    done
    [[ -z $missing ]] && pass "npz: every array" || fail "npz: missing$missing"
fi

# -- bad input: exit 2, one line on stderr, nothing written ------------------------------
printf '{"format": "mha-gui-session", "version": 1, "config": ' >"$tmp/broken.json"
bad_inputs=(
    "export --preset no-such-preset --out $tmp/out/bad1.png"
    "export --session $tmp/broken.json --out $tmp/out/bad2.png"
)
for args in "${bad_inputs[@]}"; do
    # shellcheck disable=SC2086
    run $args >"$tmp/out.txt" 2>"$tmp/err"
    status=$?
    lines=$(wc -l <"$tmp/err")
    left=$(find "$tmp/out" -name 'bad*' | wc -l)
    if [[ $status == 2 && $lines == 1 && $left == 0 ]] && grep -q '^mha-gui: error: ' "$tmp/err"; then
        pass "bad input → exit 2: $(cut -c1-90 "$tmp/err")"
    else
        fail "bad input ($args): exit $status, $lines stderr lines, $left files left: $(head -5 "$tmp/err")"
    fi
done

# -- the window stays up -----------------------------------------------------------------
run --preset toy >"$tmp/window.out" 2>"$tmp/window.err" &
pid=$!
sleep 3
if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    wait "$pid" 2>/dev/null # 143: our own SIGTERM, expected
    if grep -qiE 'traceback|fatal|segmentation|abort' "$tmp/window.err"; then
        fail "window: up 3 s but said: $(head -5 "$tmp/window.err")"
    else
        pass "window: mha-gui --preset toy stayed up 3 s offscreen"
    fi
else
    wait "$pid"
    fail "window: exited with status $? within 3 s: $(tail -5 "$tmp/window.err")"
fi

echo "smoke test: $passes passed, $failures failed"
((failures == 0))

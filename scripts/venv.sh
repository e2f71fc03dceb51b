# Sourced by scripts/run and scripts/test (from the checkout's root): make .venv with a
# Python Palimpsest runs on, $PYTHON or else python3, and refuse one too old in words that
# say what to do, before pip fails on a dependency with no such version.
PYTHON=${PYTHON:-python3}
too_old() {  # PYTHON WHAT HINT
    "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && return 1
    echo "${0##*/}: $2 is $("$1" --version 2>/dev/null || echo "not found"); Palimpsest needs" \
        "Python 3.11 or later. $3" >&2
}
if [ -x .venv/bin/python ]; then
    if too_old .venv/bin/python .venv "Remove it (rm -rf .venv) and run again, with
    PYTHON=python3.12 (or any 3.11+) if python3 is older."; then exit 1; fi
else
    if too_old "$PYTHON" "$PYTHON" "Install python3.11 or later and run PYTHON=python3.12 $0."
    then exit 1; fi
    "$PYTHON" -m venv .venv
fi

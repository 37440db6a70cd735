#!/usr/bin/env bash
# The demo: install what is missing, build, then find the devices, explain the choice, and check the setup.
# (Running a bundled model, validating it and showing the speed arrive with the model engine, issue 4.)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$(nproc)" --target tb >/dev/null
tb=build/release/tb
echo "\$ tb devices"; "$tb" devices
echo; echo "\$ tb select --explain"; "$tb" select --explain
echo; echo "\$ tb doctor"; "$tb" doctor

#!/usr/bin/env bash
# O3 against O2 on the same model and threads (docs/performance.md, "O3 against O2"): ROUNDS rounds, each one
# `tb run --repeat REPEAT` at O2 then one at O3 (a fresh process, so O3 prepares and runs its bf16 trials every
# round), and per configuration the fastest run over all rounds (the statistic least moved by other processes
# on a shared machine), the median of the rounds' medians, and O3's bf16 node count per round.
# Usage: bash bench/models/o3_vs_o2.sh TB MODEL.onnx [THREADS (default 1)] [ROUNDS (3)] [REPEAT (10)]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bash bench/models/o3_vs_o2.sh TB MODEL.onnx [THREADS] [ROUNDS] [REPEAT]" >&2; exit 2; }
tb="$1" model="$2" threads="${3:-1}" rounds="${4:-3}" repeat="${5:-10}"
[ -x "$tb" ] || { echo "o3_vs_o2: '$tb' is not an executable tb; build it first (cmake --build BUILD --target tb)" >&2; exit 2; }
[ -f "$model" ] || { echo "o3_vs_o2: no model file '$model'" >&2; exit 2; }
declare -A fastest medians bf16
for ((r = 0; r < rounds; r++)); do
  for level in O2 O3; do
    out="$("$tb" run "$model" --level "$level" --threads "$threads" --repeat "$repeat")"
    line="$(grep '^run:' <<<"$out")"
    med="$(sed -E 's/.*median ([0-9.]+) ms.*/\1/' <<<"$line")"
    fast="$(sed -E 's/.*fastest ([0-9.]+) ms.*/\1/' <<<"$line")"
    medians[$level]="${medians[$level]:-} $med"
    fastest[$level]="$(awk -v a="${fastest[$level]:-1e300}" -v b="$fast" 'BEGIN { print (b < a ? b : a) }')"
    [ "$level" = O3 ] && bf16[$level]="${bf16[$level]:-} $(grep -oE '[0-9]+ in reduced precision' <<<"$out" | cut -d' ' -f1)"
  done
done
median_of() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
m2="$(median_of "${medians[O2]}")" m3="$(median_of "${medians[O3]}")"
printf '%s | %s | O2 fastest %s ms, median %s | O3 fastest %s ms, median %s | O2/O3 fastest %.2f, median %.2f | O3 bf16 nodes:%s | load %s\n' \
  "$(basename "$model" .onnx)" "$threads" "${fastest[O2]}" "$m2" "${fastest[O3]}" "$m3" \
  "$(awk -v a="${fastest[O2]}" -v b="${fastest[O3]}" 'BEGIN { print a / b }')" "$(awk -v a="$m2" -v b="$m3" 'BEGIN { print a / b }')" \
  "${bf16[O3]}" "$(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# ProbeGuard's release gate for CI (the GitHub Action in action.yml runs this script; any CI
# can). Settings come from the environment:
#
#   PG_CONFIG          the scan config (required)
#   PG_BASELINE        an approved run directory (holding run.json) to compare with; without
#                      one the candidate is gated alone (rate limits, completeness)
#   PG_GATE            a gate policy file (default: the config's gate: section, else defaults)
#   PG_OUT             output folder (default probeguard-out): candidate/ (the run),
#                      responses/ (the recorded raw responses), gate/ (compare.json,
#                      compare.md, junit.xml)
#   PG_MAX_ERROR_RATE  above this share of errored cases the run is incomplete
#   PG_RETRIES         how often an incomplete run is resumed (default 2)
#   PROBEGUARD         the command (default: probeguard)
#
# 1. Scan the candidate, recording every raw response in PG_OUT/responses (the
#    content-addressed cache): the same command with the service stopped re-scores them
#    offline, with no call.
# 2. Retry infrastructure errors, never semantic failures: the runner already retries
#    transient errors (timeouts, 429, 5xx); a run still incomplete (exit 3: every case
#    errored, or errors above PG_MAX_ERROR_RATE) is resumed, which re-asks only the errored
#    cases. A wrong answer is a result, not an error: nothing is re-asked for it.
# 3. Compare with the baseline and apply the gate. Exit 0 pass, 1 gate failed, 2 bad input,
#    3 incomplete. The exit code is also written to $GITHUB_OUTPUT (exit-code), and the
#    comparison appends its summary to $GITHUB_STEP_SUMMARY when set.
set -uo pipefail

: "${PG_CONFIG:?PG_CONFIG must name the scan config}"
out="${PG_OUT:-probeguard-out}"
retries="${PG_RETRIES:-2}"
read -r -a pg <<< "${PROBEGUARD:-probeguard}"

finish() {
  echo "exit-code=$1" >> "${GITHUB_OUTPUT:-/dev/null}"
  exit "$1"
}

scan=("${pg[@]}" scan --config "$PG_CONFIG" --out "$out/candidate" --cache-dir "$out/responses" --no-progress)
if [ -n "${PG_MAX_ERROR_RATE:-}" ]; then
  scan+=(--max-error-rate "$PG_MAX_ERROR_RATE")
fi
if [ -z "${PG_BASELINE:-}" ]; then
  echo "no baseline: gating the candidate alone" >&2
  if [ -n "${PG_GATE:-}" ]; then
    scan+=(--gate "$PG_GATE")
  fi
fi

"${scan[@]}"
code=$?
attempt=0
while [ "$code" -eq 3 ] && [ "$attempt" -lt "$retries" ]; do
  attempt=$((attempt + 1))
  echo "run incomplete: resuming the errored cases (retry $attempt of $retries)" >&2
  "${scan[@]}" --resume
  code=$?
done
if [ "$code" -ne 0 ] || [ -z "${PG_BASELINE:-}" ]; then
  finish "$code"
fi

compare=("${pg[@]}" compare "$PG_BASELINE" "$out/candidate" --out "$out/gate")
if [ -n "${PG_GATE:-}" ]; then
  compare+=(--gate "$PG_GATE")
fi
if [ -n "${PG_MAX_ERROR_RATE:-}" ]; then
  compare+=(--max-error-rate "$PG_MAX_ERROR_RATE")
fi
"${compare[@]}"
finish $?

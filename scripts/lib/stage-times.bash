# stage-times.bash — sourced, not run: a clock and the stage-times record
# that .ci/run prints as a table at the end of a run.
#
# When COURIER_STAGE_TIMES names a file, each stage of a run appends one line
# to it: the stage's name, a TAB, and its duration in seconds as a decimal
# ("build<TAB>312.4"). A stage records its time whether it passed or failed,
# so the table also shows where a failed run spent its time.

# Microseconds since the epoch: bash's EPOCHREALTIME without its decimal
# separator (a comma in some locales), so the arithmetic stays in integers.
clock_us() { echo "${EPOCHREALTIME//[!0-9]/}"; }

# seconds_since START_US — the time since START_US, in seconds, one decimal.
seconds_since() {
  local us=$(($(clock_us) - $1))
  printf '%d.%d' $((us / 1000000)) $((us % 1000000 / 100000))
}

# stage_record NAME START_US — append NAME and the time since START_US to
# COURIER_STAGE_TIMES; nothing when it is unset.
stage_record() {
  [ -n "${COURIER_STAGE_TIMES:-}" ] || return 0
  printf '%s\t%s\n' "$1" "$(seconds_since "$2")" >>"$COURIER_STAGE_TIMES"
}

# stage NAME COMMAND... — run COMMAND, record its duration under NAME, and
# return its status.
stage() {
  local name=$1 start rc=0
  shift
  start=$(clock_us)
  "$@" || rc=$?
  stage_record "$name" "$start"
  return $rc
}

# shellcheck shell=bash
# bench/lib.sh - sourced by scripts/bench and bench/*/run.sh: how busy the machine was while a
# benchmark measured wall-clock time, so that the documents say it beside the figures.
#
#   busy_start                 remember the machine's and this shell's CPU time so far
#   busy_end FILE              write to FILE one line, "OTHERS LOAD1 LOAD5 LOAD15 SECONDS":
#                              OTHERS = the CPU time every other process used since busy_start,
#                              in cores (0 = the benchmark had the machine to itself, up to the
#                              number of cores), then the load average, then the seconds elapsed
#
# "This shell's CPU time" is its own and that of every child it waited for (and their waited-for
# children: the drivers and the servers they run), so OTHERS leaves out what the benchmark itself
# used. The load average includes the benchmark's own processes (about 2 while a driver and a
# server are both busy) and lags by a minute or more; OTHERS is the figure to read.

_busy_sample() {
  # Machine: busy and total clock ticks of all CPUs (steal counts as busy: another guest ran);
  # ours: utime + stime + cutime + cstime of this shell, $$ (fields 14-17 of /proc/PID/stat, after
  # the command name in parentheses).
  local user nice system idle iowait irq softirq steal rest
  read -r _ user nice system idle iowait irq softirq steal rest </proc/stat
  local busy=$((user + nice + system + irq + softirq + steal))
  local total=$((busy + idle + iowait))
  local stat
  stat=$(cat "/proc/$$/stat")
  stat=${stat##*) }
  local -a f
  read -r -a f <<<"$stat"
  # f[0] is field 3 (state): fields 14-17 are f[11] to f[14].
  echo "$busy $total $((f[11] + f[12] + f[13] + f[14])) $(date +%s.%N)"
}

busy_start() { _busy_mark=$(_busy_sample); }

busy_end() {
  local now
  now=$(_busy_sample)
  local cores
  cores=$(nproc)
  awk -v a="$_busy_mark" -v b="$now" -v n="$cores" -v loadavg="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    total = y[2] - x[2]; others = (y[1] - x[1]) - (y[3] - x[3])
    if (others < 0) others = 0
    printf "%.2f %s %.0f\n", (total > 0 ? others * n / total : 0), loadavg, y[4] - x[4]
  }' >"$1"
}

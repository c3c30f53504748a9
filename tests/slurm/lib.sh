# shellcheck shell=bash
# tests/slurm/lib.sh: what the private Slurm set-ups share (sourced by tests/slurm/slurm-up.sh,
# slurm-down.sh and tests/cluster/cluster-up.sh, cluster-down.sh): the packages, a private
# munged, and stopping a daemon by its recorded process id. Callers set DIR (the state
# directory, absolute) and SAY (their message prefix, e.g. "slurm-up: ") and define die()
# (report, clean up, exit non-zero) before using it.

SLURM_PKGS="slurmctld slurmd slurm-client munge libpmix-dev"

# installs whichever of SLURM_PKGS are missing (apt-get, as root), unless $1 is 0; the
# commands the set-ups run must then exist
slurm_packages() {
    local install=$1 p missing=""
    for p in $SLURM_PKGS; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        if [ "$install" != 1 ]; then
            echo "${SAY}error: missing packages:$missing (--no-install given)" >&2
            exit 1
        fi
        echo "${SAY}installing$missing"
        # shellcheck disable=SC2086  # $missing is a list of package names
        if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
        } </dev/null >"$DIR/apt.log" 2>&1; then
            tail -n 20 "$DIR/apt.log" >&2
            die "could not install$missing (log: $DIR/apt.log)"
        fi
    fi
    for p in munged munge unmunge slurmctld slurmd srun sinfo scontrol squeue scancel; do
        command -v "$p" >/dev/null 2>&1 || die "$p not found after installing packages"
    done
}

# starts munged with a fresh key under DIR/munge, its socket DIR/munge-run/munge.socket (set
# in MUNGE_SOCK), its pid in DIR/pids/munged.pid; returns once a credential has been encoded
# and decoded
start_munged() {
    MUNGE_SOCK="$DIR/munge-run/munge.socket"
    # munged wants its key directory private, its socket directory searchable by everyone and
    # the socket's parent directories not writable by others
    mkdir -p "$DIR/munge" "$DIR/munge-run" "$DIR/log" "$DIR/pids" &&
        chmod 0700 "$DIR/munge" && chmod 0755 "$DIR/munge-run" "$DIR" ||
        die "cannot create the munge directories under $DIR"
    head -c 1024 /dev/urandom >"$DIR/munge/munge.key" && chmod 0400 "$DIR/munge/munge.key" ||
        die "cannot write $DIR/munge/munge.key"
    # setsid from a non-interactive shell does not fork, so $! is the daemon's own pid
    setsid munged --foreground --force --socket="$MUNGE_SOCK" --key-file="$DIR/munge/munge.key" \
        --log-file="$DIR/log/munged.log" --pid-file="$DIR/munge-run/munged.pid" \
        --seed-file="$DIR/munge/munged.seed" </dev/null >>"$DIR/log/munged.log" 2>&1 &
    echo $! >"$DIR/pids/munged.pid"
    local ok=0
    for _ in $(seq 1 50); do
        if munge -S "$MUNGE_SOCK" -n 2>/dev/null | unmunge -S "$MUNGE_SOCK" >/dev/null 2>&1; then
            ok=1
            break
        fi
        kill -0 "$(cat "$DIR/pids/munged.pid")" 2>/dev/null || break
        sleep 0.2
    done
    kill -0 "$(cat "$DIR/pids/munged.pid")" 2>/dev/null || die "munged exited"
    [ "$ok" = 1 ] || die "munged did not come up in 10 s (no credential encoded and decoded)"
}

# the slurm.conf lines both set-ups share: logging, PMIx by default, no cgroups, nodes that
# may claim more CPUs than they have (jobs run with srun --overcommit), prompt cleanup
slurm_conf_policy() {
    cat <<'EOF'
SlurmctldDebug=info
SlurmdDebug=info
# PMIx for every step unless srun says otherwise (ucoll bootstraps through PMIx_Init)
MpiDefault=pmix
# no cgroups here: process groups track the tasks, no task binding
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# the node may claim more CPUs than it has (see UCOLL_SLURM_CPUS)
SlurmdParameters=config_overrides
ReturnToService=2
TmpFS=/tmp
InactiveLimit=0
KillWait=5
MinJobAge=2
EOF
}

# the pid in DIR/pids/FILE.pid if that process still runs program COMM (default: FILE)
live_pid() {
    local f="$DIR/pids/$1.pid" comm=${2:-$1} pid
    [ -f "$f" ] || return 1
    pid=$(cat "$f")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
    echo "$pid"
}

# stops the process recorded in DIR/pids/FILE.pid (if it still runs COMM): TERM, KILL after
# 10 s; removes the record once it is gone. Returns non-zero if it does not stop.
stop_recorded() {
    local file=$1 comm=${2:-$1} pid
    pid=$(live_pid "$file" "$comm") || {
        rm -f "$DIR/pids/$file.pid"
        return 0
    }
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "${SAY}$file (pid $pid) still running 10 s after TERM; KILL"
        kill -KILL "$pid" 2>/dev/null
        sleep 0.5
    fi
    if live_pid "$file" "$comm" >/dev/null; then
        echo "${SAY}error: $file (pid $pid) does not stop" >&2
        return 1
    fi
    echo "${SAY}$file (pid $pid) stopped"
    rm -f "$DIR/pids/$file.pid"
}

# tests/testlib.sh: shell functions shared by tests/run-tests.sh and examples/run-demo.sh
# (sourced, not run): installing the Debian packages ucoll needs, building the tree, and
# launching a job under mpirun (or without a launcher) in its own process group with a timeout.
# shellcheck shell=bash

UCOLL_DEB_PACKAGES="libucx-dev ucx-utils libpmix-dev libpmix-bin check openmpi-bin
libopenmpi-dev autoconf automake libtool pkg-config make gcc
python3-numpy python3-pytest python3-venv python3-pip python3-setuptools"

# Installs the packages of UCOLL_DEB_PACKAGES that are missing (nothing when all are present).
# apt-get runs as root, or through sudo -n; returns non-zero if packages are missing and cannot
# be installed.
ucoll_need_packages() {
    local missing="" p
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "note: not a Debian system; assuming the build dependencies are installed"
        return 0
    fi
    for p in $UCOLL_DEB_PACKAGES; do
        if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed'
        then
            missing="$missing $p"
        fi
    done
    if [ -z "$missing" ]; then
        echo "packages: all present"
        return 0
    fi
    echo "packages: installing$missing"
    local sudo=""
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        else
            echo "error: missing packages:$missing; as root run:" >&2
            echo "  apt-get update && apt-get install -y --no-install-recommends$missing" >&2
            return 1
        fi
    fi
    # shellcheck disable=SC2086  # word splitting of $sudo and $missing is intended
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null &&
        $sudo env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -q --no-install-recommends $missing </dev/null
}

# Builds the tree in place (autogen, configure --enable-werror, make -j2); output goes to $1.
ucoll_build() {
    local log=$1
    {
        ./autogen.sh && ./configure --enable-werror && make -j2
    } >"$log" 2>&1
}

# The environment for local runs: loopback only (no InfiniBand here), Open MPI as root and
# with more ranks than cores. Values already set by the caller are kept.
ucoll_local_env() {
    export UCX_NET_DEVICES="${UCX_NET_DEVICES:-lo}"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_oob_tcp_if_include="${OMPI_MCA_oob_tcp_if_include:-lo}"
}

UCOLL_TESTLIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ucoll_launch NP SECONDS LOG PROGRAM [ARGS...]
# Runs PROGRAM on NP ranks under mpirun (NP = "none" for one process without a launcher),
# under `timeout -k 5 SECONDS` in a process group of its own, output to LOG. Every rank's exit
# status is recorded through tests/mp/rankwrap.sh; once all ranks have exited, a launcher still
# running 15 s later is killed (Open MPI 4.1's mpirun sometimes hangs at that point).
# Sets LAUNCH_RC (launcher status) and LAUNCH_NOTE (what went wrong, or a warning, or empty) and
# returns 0 if every rank exited with status 0.
ucoll_launch() {
    local np=$1 secs=$2 log=$3
    shift 3
    local nranks=$np done_dir
    done_dir=$(mktemp -d /tmp/ucoll-ranks.XXXXXX)
    local -a cmd
    if [ "$np" = none ]; then
        nranks=1
        cmd=(sh "$UCOLL_TESTLIB_DIR/mp/rankwrap.sh" "$done_dir" "$@")
    else
        local -a fwd=()
        local v
        for v in $(compgen -e | grep -E '^(UCX_|UCOLL_)'); do
            fwd+=(-x "$v")
        done
        cmd=("${UCOLL_MPIRUN:-mpirun}" -np "$np" "${fwd[@]}" sh "$UCOLL_TESTLIB_DIR/mp/rankwrap.sh" "$done_dir" "$@")
    fi
    echo "+ ${cmd[*]}" >"$log"
    # not an interactive shell, so setsid does not fork: $! is the new process group's id
    setsid timeout -k 5 "$secs" "${cmd[@]}" >>"$log" 2>&1 </dev/null &
    local pid=$! all_done_at="" hung=0
    while kill -0 "$pid" 2>/dev/null; do
        if [ -z "$all_done_at" ] &&
            [ "$(find "$done_dir" -name 'rank-*' | wc -l)" -ge "$nranks" ]; then
            all_done_at=$SECONDS
        fi
        if [ -n "$all_done_at" ]; then
            if [ $((SECONDS - all_done_at)) -ge 15 ]; then
                hung=1
                kill -TERM -- "-$pid" 2>/dev/null
                sleep 2
                kill -KILL -- "-$pid" 2>/dev/null
                break
            fi
        fi
        sleep 0.2
    done
    wait "$pid"
    LAUNCH_RC=$?
    kill -KILL -- "-$pid" 2>/dev/null # whatever is left of the group
    # ranks the launcher left behind (in process groups of their own): a hung rank would spin
    # on through the rest of the suite. Only a wrapper of this launch is killed, with its rank.
    local wf wp
    for wf in "$done_dir"/wrapper-*; do
        [ -f "$wf" ] || continue
        wp=$(cat "$wf")
        if grep -qF "$done_dir" "/proc/$wp/cmdline" 2>/dev/null; then
            pkill -KILL -P "$wp" 2>/dev/null
            kill -KILL "$wp" 2>/dev/null
        fi
    done

    local r bad="" missing=0 st
    for ((r = 0; r < nranks; r++)); do
        if [ -f "$done_dir/rank-$r" ]; then
            st=$(cat "$done_dir/rank-$r")
            [ "$st" = 0 ] || bad="$bad rank$r=$st"
        else
            missing=$((missing + 1))
        fi
    done
    rm -rf "$done_dir"

    LAUNCH_NOTE=""
    if [ -n "$bad" ]; then
        LAUNCH_NOTE="ranks exited with errors:$bad"
    elif [ "$missing" -gt 0 ]; then
        LAUNCH_NOTE="$missing of $nranks ranks did not exit normally"
    fi
    if [ "$hung" = 1 ]; then
        if [ -z "$LAUNCH_NOTE" ]; then
            LAUNCH_NOTE="warning: every rank exited with 0 but mpirun hung; killed it (a known"
            LAUNCH_NOTE="$LAUNCH_NOTE Open MPI 4.1 problem)"
            echo "$LAUNCH_NOTE" >>"$log"
            return 0
        fi
        LAUNCH_NOTE="$LAUNCH_NOTE; the launcher hung after the ranks exited"
    elif [ "$LAUNCH_RC" = 124 ] || [ "$LAUNCH_RC" = 137 ]; then
        LAUNCH_NOTE="${LAUNCH_NOTE:+$LAUNCH_NOTE; }timed out after $secs s"
    elif [ "$LAUNCH_RC" != 0 ] && [ -z "$LAUNCH_NOTE" ]; then
        LAUNCH_NOTE="launcher exit status $LAUNCH_RC"
    fi
    [ -z "$LAUNCH_NOTE" ]
}

# ucoll_shm_reports LOG: the on-host channel counts that the ranks of a launch printed at
# finalize (UCOLL_TEST_SHM_COUNTS), as lines "RANK SENT RECEIVED", one per rank, by rank.
# mpirun forwards every rank's stdout and stderr into the log in pieces that need not end at a
# line's end (UCX writes its warnings to stdout, cut anywhere), so a report, written to stderr
# in one piece, may follow another rank's unfinished line: it is looked for anywhere in a line.
ucoll_shm_reports() {
    grep -oE 'ucoll: rank [0-9]+ shm sent [0-9]+ received [0-9]+ ' "$1" |
        awk '{ print $3, $6, $8 }' | sort -n -u -k1,1
}

#!/usr/bin/env bash
# Installs what primus-cli needs on Debian 12, and nothing else. Idempotent:
# packages already present are skipped, and `apt-get update` runs at most
# once, only when something is missing. Works without a terminal (CI=true)
# and as root or with sudo.
#
#   scripts/setup.sh               the main job: build primus-cli, run the example training
#   scripts/setup.sh --all         also everything the whole test suite, the benches and
#                                  the fuzz targets use (scripts/test.sh, CI); --test is the same
#   scripts/setup.sh --print [--all]   list the packages and exit
set -euo pipefail

# The main job (README): build primus-cli and run the example training.
MAIN_PACKAGES=(
  # build; GoogleTest only because the build tree configures its tests too
  cmake ninja-build g++ binutils
  libyaml-cpp-dev nlohmann-json3-dev libfmt-dev libgtest-dev
  # `analyze logs`: every failure signature in one pass (RE2::Set), linked statically
  libre2-dev
  # the example trainer's workers: Debian's PyTorch (gloo backend) on /usr/bin/python3
  python3 python3-torch python3-numpy
  # Debian's torch otherwise runs on the reference BLAS, about 10x slower on CPU;
  # also the CPU path of `benchmark gemm` (opened at run time)
  libopenblas0-pthread
)

# Everything else: the whole test suite, the benches, the fuzz targets, packaging.
TEST_PACKAGES=(
  make
  # the Primus examples check reads experiment files (tests/tools/check_primus_examples.py)
  python3-yaml
  # `benchmark comm` on CPUs: gloo, linked by build/primus-comm-worker
  libgloo-dev
  # process and network tools the tests use
  procps iproute2 util-linux psmisc
  # replay's code record (git commit, uncommitted diff): its tests make a repository
  git
  # scontrol: the hostlist differential test; slurmctld + slurmd: the Slurm
  # runtime tests start a real local cluster (tests/support/slurm_cluster.h)
  slurm-client slurmctld slurmd
  # the MPI scheduler layer's test: a real Open MPI mpirun starts the agents
  openmpi-bin
  # the stacks of a hung worker that is not Python: gdb, the agent's last resort
  gdb
  # the container runtime's tests: podman (with crun) and a private dockerd
  podman crun docker.io
  # `analyze topology --visualize` renders its Graphviz graph with dot
  graphviz
  # `analyze run --html`: its test renders the report in a real headless browser
  chromium
  # the etcd rendezvous tests start a real etcd 3.4 (src/job/etcd_rendezvous_etcd_test.cc)
  etcd-server
  # the ssh runtime's tests: a real sshd per network-namespace host, the system's ssh client
  openssh-server openssh-client
  # bench/ssh_launch.py: pdsh + torchrun on every host, the anchor of `primus-cli ssh`
  pdsh
  # `monitor`'s terminal view is tested in a real terminal: a detached tmux session
  # (tests/integration/monitor_test.cc)
  tmux
  # the metrics port's tests: a real Prometheus scraping a job, promtool checking /metrics
  # (tests/support/prometheus_server.h)
  prometheus
  # TensorBoard event files read back by a decoder that is not ours: protobuf's
  # Python runtime and crcmod's CRC-32C (tests/tools/read_tfevents.py)
  python3-protobuf python3-crcmod
  # the fuzz targets (tests/fuzz): clang's libFuzzer and sanitizer runtimes
  clang libclang-rt-14-dev
  # the install tests: man pages checked with `man -l --warnings` (man-db, groff),
  # the completion scripts loaded by a real zsh and fish
  man-db groff-base zsh fish
)

PACKAGES=("${MAIN_PACKAGES[@]}")
print=false
for arg in "$@"; do
  case "$arg" in
    --all|--test) PACKAGES+=("${TEST_PACKAGES[@]}") ;;
    --print) print=true ;;
    *) echo "setup: unknown argument '$arg'" >&2
       echo "usage: scripts/setup.sh [--all|--test] [--print]" >&2
       exit 2 ;;
  esac
done

if $print; then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 4; }
  SUDO="sudo"
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"

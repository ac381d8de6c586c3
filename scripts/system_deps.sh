#!/usr/bin/env bash
# System packages the test suite uses: headless Chromium (the review site's browser tests) and SLURM with munge (a
# real local cluster). `make test` runs this first; run it alone with `make system-deps`.
#
# As root (CI, a container) it installs what is missing with apt-get, once (a later run finds them and does
# nothing). Without root it installs nothing and says what is missing: the tests that need a missing tool then
# skip and say so (README "Set-up" explains); as root a missing tool makes its tests fail.
set -euo pipefail
PACKAGES=(chromium slurmctld slurmd slurm-client munge)
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
missing=()
have chromium || have chromium-browser || missing+=(chromium)
have slurmctld || missing+=(slurmctld)
have slurmd || missing+=(slurmd)
have sbatch && have squeue || missing+=(slurm-client)
have munged || missing+=(munge)
if [ ${#missing[@]} -eq 0 ]; then
  echo "system-deps: ${PACKAGES[*]} present"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing ${missing[*]} (not root, or no apt-get: install them with your package manager;" \
       "the browser and SLURM tests skip without them)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# keep the daemons from starting during the install (the SLURM test starts its own cluster)
made_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; made_policy=1; fi
trap '[ $made_policy = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
start=$(date +%s)
apt-get -o DPkg::Lock::Timeout=120 update -q >/dev/null
apt-get -o DPkg::Lock::Timeout=120 install -y -q --no-install-recommends "${missing[@]}" >/dev/null
echo "system-deps: installed ${missing[*]} in $(( $(date +%s) - start )) s"

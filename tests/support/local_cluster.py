"""A throw-away single-node SLURM cluster on this machine, for the SLURM integration test.

Everything lives in one temporary folder: the munge key and socket, ``slurm.conf`` + ``gres.conf``, state,
spool, logs and two fake GPU device files (character devices made with ``mknod``, like ``/dev/null``), declared
as ``gres/gpu``. The daemons (munged, slurmctld, slurmd) run in the foreground as children of this process on
free loopback ports, so nothing touches ``/etc/slurm``, ``/etc/munge`` or a SLURM already running here, and
:meth:`LocalSlurm.stop` ends exactly the processes it started (plus job processes that carry its config path).

Needs root (SlurmUser=root, mknod) and the Debian packages ``slurmctld slurmd slurm-client munge`` (22.05 on
Debian 12); :func:`ensure_installed` installs them with apt-get when they are missing. No systemd and no
cgroups: ``proctrack/linuxproc``, ``task/none``, no accounting database (``sacct`` does not work; finished jobs
stay visible to ``squeue``/``scontrol`` for ``MinJobAge`` seconds and are written to a ``jobcomp/filetxt`` log).

Manual use::

    python tests/support/local_cluster.py start /tmp/myslurm   # prints: export SLURM_CONF=/tmp/myslurm/slurm.conf
    python tests/support/local_cluster.py stop /tmp/myslurm
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]
BINARIES = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo"]
NODE = "agnode1"
PARTITION = "debug"
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
MARKER = "# autograde local test cluster:"
"""First line of every slurm.conf this module writes; a system slurm.conf without it is never touched."""


class SlurmUnavailable(RuntimeError):
    """SLURM cannot be set up here for a known reason (not root, no apt-get/network, a foreign slurm.conf).

    Tests skip on it, with the message as the reason.
    """


class ClusterStartError(RuntimeError):
    """A daemon of the local cluster exited or did not become ready in time (a failure, not a skip)."""


def missing_binaries() -> list[str]:
    return [b for b in BINARIES if shutil.which(b) is None and not Path("/usr/sbin", b).exists()]


def _which(name: str) -> str:
    found = shutil.which(name) or (str(Path("/usr/sbin", name)) if Path("/usr/sbin", name).exists() else None)
    if found is None:
        raise SlurmUnavailable(f"{name} not found")
    return found


def ensure_installed() -> None:
    """The SLURM and munge binaries are here (``make system-deps``, which ``make test`` runs first, installs them
    as root). Missing without root: :class:`SlurmUnavailable` (the test skips, as README "Set-up" says); missing as
    root: the set-up step did not run or failed, which is a failure (:class:`ClusterStartError`)."""
    missing = missing_binaries()
    if not missing:
        return
    if os.geteuid() != 0:
        raise SlurmUnavailable(f"SLURM binaries missing ({', '.join(missing)}) and not root to install them "
                               "(make system-deps as root installs " + " ".join(PACKAGES) + ")")
    raise ClusterStartError(f"SLURM binaries missing ({', '.join(missing)}) although this is root: run make "
                            "system-deps (make test runs it first), which installs " + " ".join(PACKAGES))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _mem_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 4096


@dataclass
class LocalSlurm:
    """One single-node cluster in ``root`` (a fresh folder); use :meth:`start` / :meth:`stop` or ``with``."""

    root: Path
    cpus: int = max(2, os.cpu_count() or 2)
    real_memory_mb: int = max(64000, _mem_mb())
    gpus: int = 2
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """The environment for SLURM commands (and Snakemake) talking to this cluster."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SQUEUE_", "SRUN_"))}
        env["SLURM_CONF"] = str(self.conf)
        return env

    def write_config(self) -> None:
        r = self.root
        for d in ("state", "spool", "log", "dev", "munge"):
            (r / d).mkdir(parents=True, exist_ok=True)
        (r / "munge").chmod(0o700)
        key = r / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        for i in range(self.gpus):  # fake GPUs: character devices with /dev/null's numbers
            dev = r / "dev" / f"fakegpu{i}"
            if not dev.exists():
                os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))
        host = socket.gethostname().split(".")[0]
        conf = f"""\
{MARKER} {r}
ClusterName=autograde-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={r}/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
MailProg=/bin/true
JobCompLoc={r}/log/jobcomp.log
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
KillWait=5
InactiveLimit=0
Waittime=0
GresTypes=gpu
NodeName={NODE} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.real_memory_mb} \
Gres=gpu:fake:{self.gpus} State=UNKNOWN
PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""
        self.conf.write_text(conf)
        # The executor's job step runs a nested `srun` with every SLURM_* variable but the job id removed
        # (SLURM_CONF included), so srun reads only the compiled-in path: the config must be there too.
        if SYSTEM_CONF.exists() and not SYSTEM_CONF.read_text(errors="replace").startswith(MARKER):
            raise SlurmUnavailable(f"{SYSTEM_CONF} belongs to another SLURM installation; the test cluster would "
                                   "have to replace it (the job step's nested srun reads only that path)")
        SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
        SYSTEM_CONF.write_text(conf)
        last = f"[0-{self.gpus - 1}]" if self.gpus > 1 else "0"
        (r / "gres.conf").write_text(f"NodeName={NODE} Name=gpu Type=fake File={r}/dev/fakegpu{last}\n")

    def _spawn(self, name: str, cmd: list[str]) -> None:
        log = open(self.root / "log" / f"{name}.out", "wb")  # closed with the process
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                            start_new_session=True, cwd=self.root)

    def start(self, timeout: float = 60) -> None:
        """Write the config, start munged, slurmctld and slurmd, and wait until the node is idle."""
        if os.geteuid() != 0:
            raise SlurmUnavailable("a local SLURM cluster needs root (SlurmUser=root, mknod)")
        self.root.mkdir(parents=True, exist_ok=True)
        self.write_config()
        r = self.root
        try:
            self._spawn("munged", [_which("munged"), "-F", "-f", f"--socket={r}/munge/munge.socket",
                                   f"--key-file={r}/munge/munge.key", f"--pid-file={r}/munge/munged.pid",
                                   f"--log-file={r}/log/munged.log", f"--seed-file={r}/munge/munged.seed"])
            self._wait(lambda: (r / "munge" / "munge.socket").exists(), 15, "munged socket")
            self._spawn("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(self.conf)])
            self._wait(lambda: self.run("scontrol", "ping", check=False).stdout.count("UP") > 0, timeout,
                       "slurmctld to answer scontrol ping")
            self._spawn("slurmd", [_which("slurmd"), "-D", "-N", NODE, "-f", str(self.conf)])
            self._wait(self._node_ready, timeout, f"node {NODE} to become idle")
        except Exception:
            self.stop()
            raise

    def _node_ready(self) -> bool:
        state = self.run("sinfo", "-h", "-n", NODE, "-o", "%T", check=False).stdout.strip().lower()
        if state.startswith(("down", "drain", "fail")):
            self.run("scontrol", "update", f"nodename={NODE}", "state=resume", check=False)
        return state.startswith(("idle", "mix", "alloc"))

    def _wait(self, cond, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise ClusterStartError(f"{name} exited with {p.returncode} while waiting for {what}:\n"
                                           + self.log_tail(name))
            if cond():
                return
            time.sleep(0.3)
        raise ClusterStartError(f"timed out after {timeout:.0f}s waiting for {what}:\n" + self.log_tail())

    def run(self, *cmd: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """Run a SLURM command against this cluster."""
        r = subprocess.run([_which(cmd[0]), *cmd[1:]], env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        return r

    def jobs(self) -> list[dict[str, str]]:
        """Every job slurmctld still knows (finished ones for MinJobAge seconds), as ``scontrol show job`` fields."""
        out = self.run("scontrol", "show", "job", "--oneliner", "--details", check=False).stdout
        return [parse_scontrol_line(line) for line in out.splitlines() if line.startswith("JobId=")]

    def log_tail(self, name: str | None = None, chars: int = 3000) -> str:
        names = [name] if name else ["slurmctld", "slurmd", "munged"]
        parts = []
        for n in names:
            for p in (self.root / "log" / f"{n}.log", self.root / "log" / f"{n}.out"):
                if p.exists():
                    parts.append(f"--- {p.name}\n{p.read_text(errors='replace')[-chars:]}")
        return "\n".join(parts)

    def stop(self, timeout: float = 20) -> None:
        """Cancel every job, stop the daemons, end job processes still using this cluster's config."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.run("scancel", "--full", "--partition", PARTITION, check=False)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                q = self.run("squeue", "-h", "-t", "PD,R,CG,CF,S", "-o", "%i", check=False)
                if q.returncode != 0 or not q.stdout.strip():
                    break
                time.sleep(0.5)
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.terminate()
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        for p in self.procs.values():
            if p.stdout is not None:
                p.stdout.close()
        self.procs.clear()
        for pid in self.leftover_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        remove_system_conf(self.root)

    def leftover_pids(self) -> list[int]:
        """Processes (slurmstepd, job scripts) whose command line or environment names this cluster's folder."""
        me = os.getpid()
        marker = str(self.root).encode()
        out = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit() or int(d.name) == me:
                continue
            try:
                if marker in (d / "cmdline").read_bytes() or marker in (d / "environ").read_bytes():
                    out.append(int(d.name))
            except OSError:
                continue
        return out

    def __enter__(self) -> LocalSlurm:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def remove_system_conf(root: Path) -> None:
    """Delete /etc/slurm/slurm.conf if this module wrote it for the cluster in ``root``."""
    try:
        if SYSTEM_CONF.read_text(errors="replace").startswith(f"{MARKER} {root}\n"):
            SYSTEM_CONF.unlink()
    except OSError:
        pass


def parse_scontrol_line(line: str) -> dict[str, str]:
    """``Key=Value Key2=Value two`` (one ``scontrol --oneliner`` record) -> dict; values may contain spaces."""
    out: dict[str, str] = {}
    key = None
    for tok in line.split(" "):
        k, eq, v = tok.partition("=")
        if eq and k and (k[0].isupper() or k in ("gres",)) and "/" not in k:
            key = k
            out[key] = v
        elif key is not None:
            out[key] += " " + tok
    return {k: v.strip() for k, v in out.items()}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print(__doc__)
        return 2
    root = Path(argv[1]).resolve()
    if argv[0] == "start":
        ensure_installed()
        c = LocalSlurm(root)
        c.start()
        (root / "pids.json").write_text(json.dumps({k: p.pid for k, p in c.procs.items()}))
        print(f"export SLURM_CONF={c.conf}")
        os._exit(0)  # leave the daemons running (they are in their own sessions)
    pids = json.loads((root / "pids.json").read_text()) if (root / "pids.json").exists() else {}
    env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}
    subprocess.run(["scancel", "--full", "--partition", PARTITION], env=env, check=False)
    for name in ("slurmd", "slurmctld", "munged"):
        if name in pids:
            try:
                os.kill(pids[name], signal.SIGTERM)
            except ProcessLookupError:
                pass
    time.sleep(2)
    remove_system_conf(root)
    for pid in LocalSlurm(root).leftover_pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


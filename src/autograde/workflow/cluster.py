"""How many cluster jobs a run submits under a SLURM profile's grouping (``autograde plan``).

Every Snakemake job becomes a cluster job, except that jobs of one *group* (the ``group:`` of a rule, e.g. the
``analysis`` rules) that are connected in the DAG run as ONE group job, and a profile's ``group-components: NAME: N``
puts up to N unconnected parts of a group into one job; a local rule (``all``) runs on the submitting node. The
count here is Snakemake's own: its DAG of the jobs that need to run (what is already done is left out), grouped by
Snakemake's grouping code with the profile's ``group-components`` and ``groups`` (the pinned Snakemake's internals,
which no public API exposes; the SLURM test checks the count against the jobs a run really submits).

>>> parse_assignments(["analysis=10"], int, "group-components")
{'analysis': 10}
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from autograde.core.errors import ConfigError
from autograde.core.layout import CHECKOUT, PROFILES, SNAKEFILE

__all__ = ["ClusterJobs", "cluster_jobs", "format_cluster_jobs", "parse_assignments", "parse_group_components",
           "profile_grouping"]

SLURM_PROFILE = PROFILES / "slurm"
"""The profile ``autograde plan`` counts under unless told another (``--cluster-profile``)."""

T = TypeVar("T")


@dataclass(frozen=True)
class ClusterJobs:
    """The jobs of a run: per rule those submitted on their own, per group its Snakemake jobs and group jobs."""

    profile: str
    snakemake_jobs: int
    """Jobs that need to run, the local ones included (what ``snakemake -n`` counts)."""
    own: dict[str, int]
    """Rule -> jobs submitted as a cluster job each."""
    groups: dict[str, tuple[int, int, int]]
    """Group -> (Snakemake jobs in it, its unconnected parts, group jobs submitted)."""
    local: dict[str, int]
    """Rule -> jobs run on the submitting node (``localrules``, ``all``)."""
    group_components: dict[str, int] = field(default_factory=dict)

    @property
    def cluster_jobs(self) -> int:
        return sum(self.own.values()) + sum(jobs for *_, jobs in self.groups.values())


def parse_assignments(value: Any, cast: Callable[[str], T], key: str, where: str = "") -> dict[str, T]:
    """``NAME=VALUE`` items (a profile's list or a command line's) or a mapping, as a dict; a bad item is a
    :class:`ConfigError` naming the key."""
    if value is None:
        return {}
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, list | tuple):
        pairs = [str(v).split("=", 1) for v in value]
        bad = [v for v, p in zip(value, pairs, strict=True) if len(p) != 2]
        if bad:
            raise ConfigError(f"{where}{key}: {bad[0]!r} is not NAME=VALUE (fix: e.g. analysis=10)")
        items = [(k, v) for k, v in pairs]
    else:
        raise ConfigError(f"{where}{key}: expected NAME: VALUE entries, got {value!r} (fix: e.g. analysis: 10)")
    out: dict[str, T] = {}
    for k, v in items:
        try:
            out[str(k).strip()] = cast(str(v).strip())
        except ValueError:
            raise ConfigError(f"{where}{key}: {k}={v!r} is not valid (fix: e.g. analysis=10)") from None
    return out


def parse_group_components(value: Any, where: str = "", key: str = "group-components") -> dict[str, int]:
    """``group-components`` as Snakemake takes it (``NAME=N`` items or a mapping; N >= 1) as a dict."""
    out = parse_assignments(value, int, key, where)
    bad = [f"{k}={n}" for k, n in out.items() if n < 1]
    if bad:
        raise ConfigError(f"{where}{key}: {bad[0]} is not valid: a group job holds at least 1 part (fix: e.g. "
                          "analysis=10)")
    return out


def profile_grouping(profile: str | Path) -> tuple[dict[str, int], dict[str, str]]:
    """A Snakemake profile's ``group-components`` (group -> parts per job) and ``groups`` (rule -> group)."""
    from autograde.core.yamlfile import read_yaml

    path = Path(profile) / "config.yaml"
    raw = read_yaml(path, "Snakemake profile") or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a Snakemake profile is a mapping of options (fix: key: value lines)")
    where = f"{path}: "
    return (parse_group_components(raw.get("group-components"), where),
            parse_assignments(raw.get("groups"), str, "groups", where))


def cluster_jobs(experiment: str | Path, workdir: str | Path = ".", profile: str | Path = SLURM_PROFILE,
                 group_components: Mapping[str, int] | None = None,
                 targets: Iterable[str] = ()) -> ClusterJobs:
    """The jobs a cluster run of ``experiment`` in ``workdir`` submits under ``profile``'s grouping
    (``group_components`` overrides the profile's, as ``snakemake --group-components`` does). Snakemake builds its
    DAG here, as ``snakemake -n`` does (nothing runs, nothing is locked); the working directory is restored."""
    import immutables
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        ExecutionSettings,
        GroupSettings,
        OutputSettings,
        ResourceSettings,
    )
    from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry

    components, overwrite = profile_grouping(profile)
    components.update(group_components or {})
    cwd = os.getcwd()
    try:
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            workflow_api = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(config={"experiment": str(Path(experiment).resolve())}),
                snakefile=SNAKEFILE, workdir=Path(workdir).resolve())
            workflow_api.dag(DAGSettings(targets=frozenset(targets)))
            wf = workflow_api._workflow
            # as `snakemake -n` with a cluster executor: rules keep their groups (a local run drops them)
            wf.execution_settings = ExecutionSettings()
            wf.group_settings = GroupSettings(group_components=immutables.Map(components),
                                              overwrite_groups=immutables.Map(overwrite))
            wf._executor_plugin = ExecutorPluginRegistry().get_plugin("dryrun")
            wf._prepare_dag(forceall=False, ignore_incomplete=True, lock_warn_only=True, nolock=True)
            wf._build_dag()
            dag = wf.dag
            wf.async_run(dag.postprocess(update_needrun=False, check_initial=True))
            jobs = list(dag.needrun_jobs())
            grouped = {id(g): g for j in jobs if (g := dag._group.get(j)) is not None}
            in_groups = {id(j) for g in grouped.values() for j in g.jobs}
            local = Counter(j.rule.name for j in jobs if id(j) not in in_groups
                            and (j.rule.name in wf._localrules or j.rule.norun))
            own = Counter(j.rule.name for j in jobs if id(j) not in in_groups and j.rule.name not in local)
            groups: dict[str, tuple[int, int, int]] = {}
            for g in grouped.values():
                n, parts, k = groups.get(g.groupid, (0, 0, 0))
                groups[g.groupid] = (n + len(g.jobs), parts + _parts(g.jobs, dag._dependencies), k + 1)
    finally:
        os.chdir(cwd)
    return ClusterJobs(str(profile), len(jobs), dict(own), groups, dict(local), dict(components))


def _parts(jobs: Iterable[Any], dependencies: Mapping[Any, Iterable[Any]]) -> int:
    """The connected parts of a group job's jobs (linked by a dependency between two of them)."""
    members = {id(j): j for j in jobs}
    parent = {k: k for k in members}

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for k, job in members.items():
        for dep in dependencies.get(job, ()):
            if id(dep) in members:
                parent[root(id(dep))] = root(k)
    return len({root(k) for k in members})


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def format_cluster_jobs(c: ClusterJobs) -> str:
    """One line of ``autograde plan``: the cluster jobs, and how the Snakemake jobs make them."""
    parts = [f"{rule} {n}" for rule, n in sorted(c.own.items())]
    parts += [f"group {g}: {_n(n, 'job')} in {_n(p, 'unconnected part')}, {_n(k, 'group job')} (up to {_n(c.group_components.get(g, 1), 'part')} per job)"
              for g, (n, p, k) in sorted(c.groups.items())]
    local = ", ".join(f"{rule} {n}" for rule, n in sorted(c.local.items()))
    profile = Path(c.profile).resolve()
    shown = profile.relative_to(CHECKOUT) if profile.is_relative_to(CHECKOUT) else profile
    return (f"- cluster jobs under {shown}: {c.cluster_jobs} for the {c.snakemake_jobs} Snakemake jobs to run ("
            + "; ".join(parts) + (f"; on the submitting node: {local}" if local else "") + ")")

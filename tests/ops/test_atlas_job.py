"""deploy/k8s/atlas-job.yaml runs what it says: its containers' commands, as Kubernetes
would expand them (``$(VAR)`` from the container's env; ATLAS_INDEX, the completion index, per pod),
run here for each index of a small range, and the merge Job's command merges them into what
one run gives. No cluster here: tests/ops/test_deploy_files.py checks the manifest against
the API's schemas."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from service.atlas import batch

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "atlas-job.yaml"
GAME, DEALS = "penguin-ii", range(1, 31)


def documents() -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in yaml.safe_load_all(MANIFEST.read_text()) if d}


def container_of(pod_spec: dict[str, Any]) -> dict[str, Any]:
    (container,) = pod_spec["containers"]
    return container


def command(container: dict[str, Any], env: dict[str, str], mount: Path) -> list[str]:
    """The container's command and args as Kubernetes expands them, the volume's mount
    path replaced by ``mount``."""
    values = {e["name"]: e.get("value", "") for e in container.get("env", [])} | env

    def expand(arg: str) -> str:
        return re.sub(r"\$\((\w+)\)", lambda m: values.get(m.group(1), m.group(0)), arg)

    (volume,) = [m for m in container["volumeMounts"] if m["name"] == "atlas"]
    argv = [expand(a) for a in [*container["command"], *container["args"]]]
    return [str(mount) if a == volume["mountPath"] else a for a in argv]


def run(argv: list[str]) -> None:
    assert argv[0] == "python"
    done = subprocess.run([sys.executable, *argv[1:]], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()


def test_the_solve_jobs_blocks_are_its_completions_and_the_image_is_the_services() -> None:
    docs = documents()
    job = docs["Job"]["spec"]
    assert job["completionMode"] == "Indexed"
    # one writer per block: a replacement pod starts only once the old one has stopped
    assert job["podReplacementPolicy"] == "Failed" and job["template"]["spec"]["restartPolicy"] == "Never"
    container = container_of(job["template"]["spec"])
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["ATLAS_BLOCKS"] == str(job["completions"])
    deployment = yaml.safe_load((MANIFEST.parent / "deployment.yaml").read_text().split("\n---")[0])
    assert container["image"] == container_of(deployment["spec"]["template"]["spec"])["image"]
    merge = container_of(docs["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"])
    assert merge["image"] == container["image"] and docs["CronJob"]["spec"]["suspend"] is True
    # the workers follow the CPU limit, not the node's CPUs a container sees
    workers = next(e for e in container["env"] if e["name"] == "ATLAS_WORKERS")
    assert workers["valueFrom"]["resourceFieldRef"]["resource"] == "limits.cpu"
    # each pod's block is its completion index, which the Job controller writes on the pod
    index = next(e for e in container["env"] if e["name"] == "ATLAS_INDEX")
    assert index["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    assert "$(ATLAS_INDEX)" in container["args"]


def test_the_manifests_commands_solve_each_index_and_merge_to_one_runs_result(tmp_path: Path) -> None:
    docs = documents()
    solve = container_of(docs["Job"]["spec"]["template"]["spec"])
    merge = container_of(docs["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"])
    small = {"ATLAS_GAMES": GAME, "ATLAS_DEALS": f"{DEALS.start}-{DEALS.stop - 1}", "ATLAS_BLOCKS": "3",
             "ATLAS_WORKERS": "1"}
    volume = tmp_path / "volume"
    for index in range(3):
        run(command(solve, small | {"ATLAS_INDEX": str(index)}, volume))
    run(command(merge, {"ATLAS_GAMES": GAME}, volume))
    batch.run(tmp_path / "alone", GAME, DEALS, workers=1, progress=None)
    batch.merge(tmp_path / "alone", GAME)
    merged = batch.merged_path(volume, GAME).read_bytes()
    assert merged == batch.merged_path(tmp_path / "alone", GAME).read_bytes()
    assert merged.count(b"\n") == len(DEALS)

"""The deploy files are valid for their tools, as far as this machine can check.

No Docker engine or Kubernetes cluster here: the Kubernetes manifests are validated against
the API's JSON schemas (kubernetes-validate, offline), the Dockerfile is linted (hadolint),
and the compose file is checked for what the other files rely on. HAProxy's config is
checked by haproxy itself in test_load_balancer.py.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
MANIFESTS = sorted((DEPLOY / "k8s").glob("*.yaml"))
K8S_VERSIONS = ["1.30.0", "1.37.0"]  # oldest and newest the schemas cover that we claim


def manifests() -> dict[tuple[str, str], dict[str, Any]]:
    """Every manifest, by kind and name."""
    docs = [d for path in MANIFESTS for d in yaml.safe_load_all(path.read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


PLAY, SEARCH = "patience-engine", "patience-engine-search"  # the two Deployments, and their Services
SEARCH_OPERATIONS = ("solve", "hint", "deals")  # the paths that may search


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_kubernetes_manifests_match_the_api_schema(path: Path, version: str) -> None:
    for doc in yaml.safe_load_all(path.read_text()):
        kubernetes_validate.validate(doc, version, strict=True)


def test_the_schema_check_catches_a_misspelt_field() -> None:
    deployment = copy.deepcopy(manifests()[("Deployment", PLAY)])
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSIONS[-1], strict=True)


@pytest.mark.parametrize("name", [PLAY, SEARCH])
def test_kubernetes_deployment_probes_resources_and_scaling_fit_together(name: str) -> None:
    kinds = manifests()
    deployment = kinds[("Deployment", name)]
    pod = deployment["spec"]["template"]["spec"]
    (api,) = pod["containers"]
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert {"cpu", "memory"} <= set(api["resources"]["requests"])
    env = {e["name"]: e.get("value") for e in api["env"]}
    drain = int(env["GUNICORN_DRAIN_SECONDS"])
    readiness = api["readinessProbe"]
    assert drain > readiness["periodSeconds"] * readiness["failureThreshold"], "drain outlasts readiness detection"
    assert pod["terminationGracePeriodSeconds"] >= drain + 35, "drain + gunicorn's graceful timeout fit"
    assert pod["securityContext"]["runAsNonRoot"] is True
    labels = deployment["spec"]["selector"]["matchLabels"]
    assert deployment["spec"]["template"]["metadata"]["labels"] == labels
    assert kinds[("Service", name)]["spec"]["selector"] == labels
    assert kinds[("PodDisruptionBudget", name)]["spec"]["selector"]["matchLabels"] == labels
    target = kinds[("HorizontalPodAutoscaler", name)]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", name)
    port_names = {p["name"] for p in api["ports"]}
    assert kinds[("Service", name)]["spec"]["ports"][0]["targetPort"] in port_names


def without(pod: dict[str, Any], env_names: set[str]) -> dict[str, Any]:
    """A pod template without what may differ between play and search: its labels, its
    resources and the named environment variables."""
    pod = copy.deepcopy(pod)
    pod["metadata"].pop("labels")
    (container,) = pod["spec"]["containers"]
    container.pop("resources")
    container["env"] = [e for e in container["env"] if e["name"] not in env_names]
    return pod


def test_play_and_search_run_the_same_pod_with_quotas_of_their_own() -> None:
    """The search replicas are the play replicas' pod but for labels, resources and the
    solver's settings; their quota is Guaranteed (requests equal limits), so the CPU a search
    uses is never play's."""
    kinds = manifests()
    play = kinds[("Deployment", PLAY)]["spec"]["template"]
    search = kinds[("Deployment", SEARCH)]["spec"]["template"]
    solver_env = {"SOLVER_PROCESSES", "SOLVER_QUEUE", "SOLVER_CPUS"}
    assert without(play, solver_env) == without(search, solver_env)
    (container,) = search["spec"]["containers"]
    assert container["resources"]["requests"] == container["resources"]["limits"]
    assert play["metadata"]["labels"]["app.kubernetes.io/component"] != search["metadata"]["labels"][
        "app.kubernetes.io/component"]


def test_the_ingress_sends_every_search_path_of_every_game_to_the_search_replicas() -> None:
    """One Exact path per game and search operation, the paths deploy/haproxy.cfg's
    ``may_search`` matches; everything else to the play replicas."""
    from service.engine.registry import game_ids

    ingress = next(doc for (kind, _), doc in manifests().items() if kind == "Ingress")
    (rule,) = ingress["spec"]["rules"]
    routes = [(p["path"], p["pathType"], p["backend"]["service"]["name"]) for p in rule["http"]["paths"]]
    searched = {path for path, kind, service in routes if service == SEARCH and kind == "Exact"}
    assert searched == {f"/v1/games/{game}/{op}" for game in game_ids() for op in SEARCH_OPERATIONS}
    assert [(path, kind, service) for path, kind, service in routes if service != SEARCH] == [("/", "Prefix", PLAY)]
    may_search = re.search(r"acl may_search path -m reg (\S+)", (DEPLOY / "haproxy.cfg").read_text())
    assert may_search
    assert all(re.match(may_search.group(1), path) for path in searched)
    assert not re.match(may_search.group(1), "/v1/games/penguin/moves")


def test_dockerfile_passes_hadolint() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    run = subprocess.run([str(hadolint), "--failure-threshold", "info", str(DEPLOY / "Dockerfile")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


def test_dockerfile_runs_gunicorn_unprivileged_with_the_deploy_config() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    users = re.findall(r"^USER\s+(\S+)", text, flags=re.M)
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert re.search(r'^CMD \["gunicorn", "-c", "deploy/gunicorn.conf.py", "service.wsgi:app"\]', text, flags=re.M)
    assert "HEALTHCHECK" in text and "/healthz" in text
    # Everything the image copies from the build context exists and is not .dockerignored
    # (.dockerignore excludes everything, then lets in files and folders by name).
    let_in = re.findall(r"^!(\S+?)/?$", (REPO / ".dockerignore").read_text(), flags=re.M)
    for source in re.findall(r"^COPY (?!--from)(.+) \S+$", text, flags=re.M):
        for path in source.split():
            assert (REPO / path).exists(), path
            assert any(path == p or path.startswith(p + "/") for p in let_in), f"{path} is excluded by .dockerignore"


def test_dockerfile_compiles_in_the_build_stage_and_ships_no_compiler() -> None:
    """The compiled modules (the searches, the wire codec, the Penguin move lister) are built (setup.py, with gcc)
    in a stage before the last, from every C source and header of theirs; the image
    itself installs nothing and takes only the venv and the built modules from that
    stage."""
    *build_stages, final = re.split(r"^FROM ", (DEPLOY / "Dockerfile").read_text(), flags=re.M)[1:]
    compiling = [s for s in build_stages if re.search(r"apt-get install .*\bgcc\b", s) and "setup.py" in s]
    assert compiling
    sources = sorted(str(p.relative_to(REPO)) for p in (REPO / "service").rglob("_*native*.[ch]"))
    assert len([s for s in sources if s.endswith(".c")]) == 4  # the two searches, the wire codec and the Penguin move lister
    copied = re.findall(r"^COPY (service/\S+) ", compiling[0], flags=re.M)
    assert sorted(copied) == sources
    assert "apt-get" not in final and "gcc" not in final
    taken = re.findall(r"^COPY --from=build (\S+) ", final, flags=re.M)
    modules = [f"/src/{name.removesuffix('.c')}.*.so" for name in sources if name.endswith(".c")]
    assert taken[0] == "/opt/venv" and sorted(taken[1:]) == sorted(modules)


def test_compose_runs_replicas_behind_haproxy_with_the_deploy_files() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    api, lb = compose["services"]["api"], compose["services"]["lb"]
    assert api["deploy"]["replicas"] >= 2
    assert (DEPLOY / api["build"]["context"] / api["build"]["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in lb["volumes"]  # the official image's path
    # Every variable the HAProxy config reads has a default there, and compose sets each.
    cfg = (DEPLOY / "haproxy.cfg").read_text()
    used = set(re.findall(r"\$\{(\w+)\}", cfg))
    defaulted = set(re.findall(r"^\s*presetenv (\w+)", cfg, flags=re.M))
    assert used == defaulted == set(lb["environment"])
    assert lb["environment"]["API_HOST"] == "api"
    assert [lb["environment"]["API_PORT"]] == api["expose"] == ["8000"]  # the image's PORT
    grace = int(api["stop_grace_period"].rstrip("s"))
    assert grace >= int(api["environment"]["GUNICORN_DRAIN_SECONDS"]) + 35, "drain + graceful timeout fit"

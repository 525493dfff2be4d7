"""docker-compose.yml checked against the code: no Docker engine runs here, so the file is parsed.

Every service and the agent are present and start an importable module; every variable the
settings require is set; ports agree between settings, port mappings and health checks; the
broker and database addresses point at services of the file; dependencies exist and wait on
health only where a health check is defined; the image installs every package.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from sextant_core.workflow import SERVICES
from sextant_kit.settings import REQUIRED_ENV

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
APPS = (*SERVICES, "agent")


def svc(name: str) -> dict:
    return COMPOSE["services"][name]


@pytest.mark.parametrize("name", APPS)
def test_service_present_and_runs_an_importable_module(name: str) -> None:
    command = svc(name)["command"]
    assert command[:2] == ["python", "-m"], command
    module = command[2]
    assert module == f"sextant_{name}.main"
    assert importlib.util.find_spec(module) is not None, f"{module} is not installed"


@pytest.mark.parametrize("name", APPS)
def test_required_settings_are_set(name: str) -> None:
    env = svc(name)["environment"]
    missing = [v for v in REQUIRED_ENV if not str(env.get(v, "")).strip()]
    assert not missing, f"{name} lacks {missing}"
    assert env["SEXTANT_SERVICE_NAME"] == name


@pytest.mark.parametrize("name", APPS)
def test_ports_agree_with_settings_and_healthcheck(name: str) -> None:
    s = svc(name)
    port = s["environment"]["SEXTANT_HTTP_PORT"]
    assert str(port) in " ".join(s["healthcheck"]["test"]), "health check probes another port"
    for mapping in s.get("ports", []):
        assert mapping.split(":")[-1] == str(port)


def test_addresses_point_at_services_of_the_file() -> None:
    env = svc("admission")["environment"]
    host, port = env["SEXTANT_KAFKA_BOOTSTRAP"].split(":")
    kafka_env = svc("kafka")["environment"]
    assert f"PLAINTEXT://{host}:{port}" in kafka_env["KAFKA_ADVERTISED_LISTENERS"]
    db = urlsplit(env["SEXTANT_DATABASE_URL"])
    assert db.hostname in COMPOSE["services"] and db.port == 5432
    pg = svc("postgres")["environment"]
    assert (db.username, db.password, db.path.lstrip("/")) == (pg["POSTGRES_USER"], pg["POSTGRES_PASSWORD"], pg["POSTGRES_DB"])
    assert "apache/kafka" in svc("kafka")["image"] and "KAFKA_PROCESS_ROLES" in kafka_env  # KRaft


def test_dependencies_exist_and_health_conditions_are_backed_by_checks() -> None:
    for name, s in COMPOSE["services"].items():
        deps = s.get("depends_on", {})
        items = deps.items() if isinstance(deps, dict) else ((d, {}) for d in deps)
        for dep, cond in items:
            assert dep in COMPOSE["services"], f"{name} depends on unknown {dep}"
            if cond.get("condition") == "service_healthy":
                assert "healthcheck" in svc(dep), f"{name} waits for {dep}'s health but it has no check"


def test_image_installs_every_package_the_makefile_installs() -> None:
    dockerfile = (ROOT / "infra/Dockerfile").read_text()
    makefile = (ROOT / "Makefile").read_text()
    packages = re.search(r"PACKAGES := (.*?)\n\n", makefile, re.S).group(1).replace("\\", " ").split()  # type: ignore[union-attr]
    for p in packages:
        if p != "infra":
            assert f"./{p}" in dockerfile, f"Dockerfile does not install {p}"

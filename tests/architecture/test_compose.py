"""docker-compose.yml checked against the code: no Docker engine runs here, so the file is parsed.

Every process the platform starts (`sextant_cli.platform.MODULES`: the six services, the outbox
relay, the agent) is present and starts the same module; every variable its pydantic Settings
class requires is set (derived from the class's required fields) and the class accepts the
service's environment; ports agree between settings, port mappings and health checks; the
broker and database addresses point at services of the file; dependencies exist and wait on
health only where a health check is defined; the image installs every package.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from sextant_cli.platform import MODULES
from sextant_kit.settings import REQUIRED_ENV, KitSettings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
APPS = tuple(MODULES)


def svc(name: str) -> dict:
    return COMPOSE["services"][name]


def test_every_platform_process_is_a_compose_service() -> None:
    assert {"relay", "agent"} <= set(APPS)
    missing = sorted(set(APPS) - set(COMPOSE["services"]))
    assert not missing, f"docker-compose.yml lacks {missing}"


@pytest.mark.parametrize("name", APPS)
def test_service_present_and_runs_the_platform_module(name: str) -> None:
    command = svc(name)["command"]
    assert command[:2] == ["python", "-m"], command
    module = command[2]
    assert module == MODULES[name]
    assert importlib.util.find_spec(module) is not None, f"{module} is not installed"


def settings_class(module: str) -> type[KitSettings]:
    """The process's pydantic Settings class: the one KitSettings subclass its main module names."""
    found = {v for v in vars(importlib.import_module(module)).values()
             if isinstance(v, type) and issubclass(v, KitSettings) and v is not KitSettings}
    assert len(found) == 1, f"{module}: expected one Settings class, found {found}"
    return found.pop()


def required_env(cls: type[KitSettings]) -> list[str]:
    prefix = cls.model_config.get("env_prefix", "")
    return sorted(f"{prefix}{name}".upper() for name, f in cls.model_fields.items() if f.is_required())


@pytest.mark.parametrize("name", APPS)
def test_required_settings_are_set(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {k: str(v) for k, v in svc(name)["environment"].items()}
    cls = settings_class(MODULES[name])
    needed = sorted({*REQUIRED_ENV, *required_env(cls)})
    assert {"SEXTANT_DATABASE_URL", "SEXTANT_KAFKA_BOOTSTRAP"} <= set(needed)  # derived, not empty
    missing = [v for v in needed if not env.get(v, "").strip()]
    assert not missing, f"{name} lacks {missing}"
    # the class itself accepts the service's environment (types, patterns, bounds)
    for k in [k for k in os.environ if k.startswith("SEXTANT_")]:
        monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    settings = cls()  # type: ignore[call-arg]
    assert settings.service_name == name


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

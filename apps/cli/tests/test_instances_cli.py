"""`sextant up --instances SERVICE=N` (docs/platform/instances.md): the process names, the parsing,
and what each instance process is started with — its own port and log, its service's name (hence
its consumer groups, tracking id and derived output ids)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sextant_cli import platform as plat

ECHO = '''
import json, os, pathlib
keep = ("SEXTANT_SERVICE_NAME", "SEXTANT_HTTP_PORT")
pathlib.Path(os.environ["ECHO_DIR"], os.environ["SEXTANT_HTTP_PORT"]).write_text(
    json.dumps({k: os.environ[k] for k in keep}))
'''


def test_instance_names_number_the_extra_processes_only() -> None:
    names = plat.instance_names({"planning": 3, "admission": 2})
    assert names == ("admission", "admission-2", "profiling", "classification", "planning", "planning-2",
                     "planning-3", "reprovisioning", "telemetry", "relay", "agent")
    assert plat.instance_names() == (*plat.SERVICES, "relay", "agent")
    assert [plat.service_of(n) for n in ("planning-3", "planning", "relay", "agent", "planning-1", "nope-2")] == [
        "planning", "planning", "relay", "agent", "planning-1", "nope-2"]


@pytest.mark.parametrize("specs", [["planning"], ["planning=x"], ["relay=2"], ["agent=2"], ["planning=0"],
                                   ["nope=2"]])
def test_malformed_or_unknown_instances_are_refused(specs: list[str]) -> None:
    with pytest.raises(ValueError, match="--instances"):
        plat.parse_instances(specs)


def test_parse_instances_is_repeatable_and_the_last_one_wins() -> None:
    assert plat.parse_instances(["planning=2", "admission = 3", "planning=4"]) == {"planning": 4, "admission": 3}
    assert plat.parse_instances(None) == {}


def test_each_instance_is_its_own_process_with_its_own_port_and_the_services_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "echo_svc.py").write_text(ECHO)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setitem(plat.MODULES, "planning", "echo_svc")
    p = plat.Platform(tmp_path / "run", {"PYTHONPATH": str(tmp_path) + ":" + ":".join(sys.path),
                                         "ECHO_DIR": str(out)})
    p.start_all(("planning", "planning-2"))
    for proc in p.procs.values():
        assert proc.popen.wait(timeout=60) == 0, plat.tail(proc.log)
    seen = {f.name: f.read_text() for f in out.iterdir()}
    ports = {n: str(proc.port) for n, proc in p.procs.items()}
    assert len(set(ports.values())) == 2 and set(seen) == set(ports.values())
    for name in ("planning", "planning-2"):
        assert '"SEXTANT_SERVICE_NAME": "planning"' in seen[ports[name]]
        assert p.procs[name].log.name == f"{name}.log"

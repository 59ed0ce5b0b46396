"""environment.yml (conda/Binder) and pyproject.toml (pip) must list the same packages."""

import re
from pathlib import Path

import pytest
import yaml

tomllib = pytest.importorskip("tomllib")  # stdlib from Python 3.11

ROOT = Path(__file__).resolve().parents[1]


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _spec(req: str) -> str:
    # extras are a pip notion: conda-forge's `dask` already ships what pip's `dask[distributed]` adds
    return re.sub(r"\[[^\]]*\]", "", req.strip().replace(" ", ""))


def test_environment_matches_pyproject():
    pp = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = pp["optional-dependencies"]
    pip_reqs = pp["dependencies"] + extras["dev"]
    for name, reqs in extras.items():  # `make test` installs [dev], so it must carry every extra
        assert set(reqs) <= set(extras["dev"]), f"[{name}] has packages [dev] lacks: {set(reqs) - set(extras['dev'])}"
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "conda-forge" in env["channels"]
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    conda_pkgs = {_name(d): _spec(d) for d in conda if _name(d) not in {"python", "pip"}}
    pip_pkgs = {_name(r): _spec(r) for r in pip_reqs}
    assert set(conda_pkgs) == set(pip_pkgs), (
        f"only in environment.yml: {set(conda_pkgs) - set(pip_pkgs)}; "
        f"only in pyproject: {set(pip_pkgs) - set(conda_pkgs)}"
    )
    for name, spec in pip_pkgs.items():
        assert conda_pkgs[name] == spec, f"{name}: pyproject {spec!r} vs environment.yml {conda_pkgs[name]!r}"
    python = [d for d in conda if _name(d) == "python"]
    assert python and python[0].replace(" ", "") == "python" + pp["requires-python"]
    pip_section = [d for d in env["dependencies"] if isinstance(d, dict)]
    assert pip_section and "-e ." in pip_section[0]["pip"], "environment.yml must install the package itself"

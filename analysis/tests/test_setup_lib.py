"""scripts/setup_lib.sh: the venv's install in the background beside the build, waited for from any subshell, and a
failure said in one line that names the step and the command retrying it (a stub stands in for install-deps.sh)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tree(tmp_path, stub_body):
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup_lib.sh", tmp_path / "scripts" / "setup_lib.sh")
    (tmp_path / "scripts" / "install-deps.sh").write_text("#!/usr/bin/env bash\n" + stub_body)
    return tmp_path


def run(cwd, script):
    return subprocess.run(["bash", "-c", "set -euo pipefail; . scripts/setup_lib.sh; " + script], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_the_install_runs_beside_and_is_waited_for_from_a_subshell(tmp_path):
    t = tree(tmp_path, 'echo "part=$GAUGELAB_DEPS_PART venv=$GAUGELAB_VENV"; sleep 1\n')
    r = run(t, "setup_python_start b/deps.log; echo started; ( setup_python_wait b/deps.log ) && echo waited")
    assert r.returncode == 0, r.stderr
    assert r.stdout.index("started") < r.stdout.index("waited")
    assert "the venv and its torch wheel are installed (the venv, its torch wheel and the assets took" in r.stdout
    assert "part=python venv=" in (t / "b" / "deps.log").read_text()
    assert (t / "b" / "deps.log.rc").read_text().strip() == "0"


def test_a_failed_install_is_one_line_naming_the_retry(tmp_path):
    t = tree(tmp_path, 'echo "pip: no space left"; exit 3\n')
    r = run(t, "setup_python_start b/deps.log; setup_python_wait b/deps.log || echo \"status $?\"")
    assert "set-up failed at the venv and its torch wheel (log: b/deps.log); retry with: make deps" in r.stderr
    assert "status 1" in r.stdout and "pip: no space left" in r.stderr


def test_the_system_part_failing_names_make_deps(tmp_path):
    t = tree(tmp_path, 'exit 1\n')
    r = run(t, "setup_system")
    assert r.returncode != 0
    assert r.stderr.strip().splitlines()[-1] == "set-up failed at the Debian packages; retry with: make deps"

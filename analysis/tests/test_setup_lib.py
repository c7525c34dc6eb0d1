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
    assert "installed: the venv, its torch wheel and the assets took" in r.stdout
    assert "part=python venv=" in (t / "b" / "deps.log").read_text()
    assert (t / "b" / "deps.log.rc").read_text().strip() == "0"


def test_a_failed_install_is_one_line_naming_the_retry(tmp_path):
    t = tree(tmp_path, 'echo "pip: no space left"; exit 3\n')
    r = run(t, "setup_python_start b/deps.log; setup_python_wait b/deps.log || echo \"status $?\"")
    assert "set-up failed at the venv, its torch wheel and the assets (log: b/deps.log); retry with: make deps" in r.stderr
    assert "status 1" in r.stdout and "pip: no space left" in r.stderr


def test_the_system_part_failing_names_make_deps(tmp_path):
    t = tree(tmp_path, 'exit 1\n')
    r = run(t, "setup_system")
    assert r.returncode != 0
    assert r.stderr.strip().splitlines()[-1] == "set-up failed at the Debian packages; retry with: make deps"


def test_the_test_only_part_is_named_in_its_lines(tmp_path):
    t = tree(tmp_path, 'echo "part=$GAUGELAB_DEPS_PART"; [ "$GAUGELAB_DEPS_PART" = tests ]\n')
    r = run(t, "setup_python_start b/tests.log tests; setup_python_wait b/tests.log")
    assert r.returncode == 0, r.stderr
    assert "installing the venv's test-only packages in the background (log: b/tests.log)" in r.stdout
    assert "installed: the venv's test-only packages took" in r.stdout
    assert "part=tests" in (t / "b" / "tests.log").read_text()
    (tmp_path / "failing").mkdir()
    t2 = tree(tmp_path / "failing", 'exit 1\n')
    r = run(t2, "setup_python_start b/tests.log tests; setup_python_wait b/tests.log || echo \"status $?\"")
    assert "set-up failed at the venv's test-only packages (log: b/tests.log); retry with: make deps" in r.stderr
    assert "status 1" in r.stdout


def overlapped_tree(tmp_path, tests_part_body):
    """scripts/build-overlapped.sh with stubs: install-deps.sh (logs its part; the tests part runs tests_part_body),
    the venv's python (a whole torch wheel), and cmake on PATH (logs each call; a build waits, at most 20 s, until
    the tests part has started, WAIT_TRIES x 0.2 s, and records whether it had)."""
    t = tmp_path
    (t / "scripts").mkdir(parents=True)
    for f in ("setup_lib.sh", "build-overlapped.sh"):
        shutil.copy(ROOT / "scripts" / f, t / "scripts" / f)
    (t / "scripts" / "install-deps.sh").write_text(
        '#!/usr/bin/env bash\necho "install-deps part=${GAUGELAB_DEPS_PART:-all} deps=${GAUGELAB_DEPS:-test}" >> "$LOG"\n'
        'if [ "$GAUGELAB_DEPS_PART" = tests ]; then touch "$MARK"; ' + tests_part_body + '; fi\n')
    venv = t / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text('#!/usr/bin/env bash\n[ "$2" = prefix ] && echo /nowhere/share/cmake\nexit 0\n')
    stubs = t / "stubs"
    stubs.mkdir()
    (stubs / "cmake").write_text(
        '#!/usr/bin/env bash\necho "cmake $*" >> "$LOG"\n'
        'if [ "$1" = --build ]; then for i in $(seq "${WAIT_TRIES:-100}"); do [ -e "$MARK" ] && break; sleep 0.2; done\n'
        '  if [ -e "$MARK" ]; then echo "build saw the tests part started" >> "$LOG"; fi; fi\n')
    for f in (venv / "python", stubs / "cmake"):
        f.chmod(0o755)
    return t


def run_overlapped(t, **env):
    import os
    e = dict(os.environ, PATH=f"{t / 'stubs'}:{os.environ['PATH']}", VENV=str(t / "venv"), LOG=str(t / "calls.log"),
             MARK=str(t / "tests-started"), JOBS="2", **env)
    return subprocess.run(["bash", "scripts/build-overlapped.sh", "b"], cwd=t, env=e, capture_output=True, text=True,
                          timeout=60)


def test_after_the_demo_the_test_only_packages_install_beside_the_build_and_are_waited_for(tmp_path):
    t = overlapped_tree(tmp_path, "sleep 1; echo pip done >> \"$LOG\"")
    r = run_overlapped(t)
    assert r.returncode == 0, r.stdout + r.stderr
    calls = (t / "calls.log").read_text()
    assert "install-deps part=all deps=demo" in calls  # what the build needs, in the foreground
    assert "build saw the tests part started" in calls  # the test-only part ran beside the build
    assert "pip done" in calls and (t / "b" / "deps-tests.log.rc").read_text().strip() == "0"  # waited for
    assert "installed: the venv's test-only packages took" in r.stdout


def test_a_failed_test_only_install_fails_the_build_step_in_one_line(tmp_path):
    t = overlapped_tree(tmp_path, "echo 'pip: no network'; exit 4")
    r = run_overlapped(t)
    assert r.returncode != 0
    assert r.stderr.strip().splitlines()[-1] == \
        "set-up failed at the venv's test-only packages (log: b/deps-tests.log); retry with: make deps"


def test_for_the_demo_no_test_only_part_runs(tmp_path):
    t = overlapped_tree(tmp_path, "true")
    r = run_overlapped(t, GAUGELAB_DEPS="demo", WAIT_TRIES="1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "part=tests" not in (t / "calls.log").read_text()

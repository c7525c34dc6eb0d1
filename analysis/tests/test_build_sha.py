"""cmake/build_sha.cmake, run at every build: the git sha a binary reports is the commit it was built from (a new
commit after the build directory was configured included), "-dirty" when a build input differs from it (new
files among them), and the
file is rewritten only when that text changes (so an unchanged commit recompiles nothing)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "cmake" / "build_sha.cmake"


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout.strip()


def sha_of(out: Path) -> str:
    return out.read_text().split('return "', 1)[1].split('"', 1)[0]


def run(src: Path, out: Path) -> None:
    subprocess.run(["cmake", f"-DSRC={src}", f"-DOUT={out}", "-P", str(SCRIPT)], check=True, timeout=60,
                   capture_output=True)


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("git") is None, reason="needs cmake and git")
def test_the_sha_follows_each_commit_and_says_dirty(tmp_path):
    repo, out = tmp_path / "repo", tmp_path / "build_sha.cpp"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "src").mkdir()
    (repo / "src" / "a.cpp").write_text("int a = 1;\n")
    git(repo, "add", "src/a.cpp")
    git(repo, "commit", "-qm", "one")
    run(repo, out)
    first = git(repo, "rev-parse", "--short=12", "HEAD")
    assert sha_of(out) == first
    stamp = out.stat().st_mtime_ns
    run(repo, out)  # the same commit: the file is left as it is
    assert out.stat().st_mtime_ns == stamp
    (repo / "src" / "a.cpp").write_text("int a = 2;\n")  # a changed source
    run(repo, out)
    assert sha_of(out) == f"{first}-dirty"
    git(repo, "commit", "-qam", "two")
    run(repo, out)
    second = git(repo, "rev-parse", "--short=12", "HEAD")
    assert second != first and sha_of(out) == second
    (repo / "new.txt").write_text("untracked\n")  # a file outside the build's folders is not a build input
    (repo / "analysis").mkdir()
    (repo / "analysis" / "ledger.csv").write_text("a\n")
    git(repo, "add", "analysis/ledger.csv")
    git(repo, "commit", "-qm", "three")
    third = git(repo, "rev-parse", "--short=12", "HEAD")
    (repo / "analysis" / "ledger.csv").write_text("b\n")  # a results ledger rewritten by a grid: not either
    run(repo, out)
    assert sha_of(out) == third
    (repo / "src" / "x.cpp").write_text("int x;\n")  # a new source the libraries' globs compile in: dirty
    run(repo, out)
    assert sha_of(out) == f"{third}-dirty"
    plain = tmp_path / "plain"  # a source tree outside any git checkout
    plain.mkdir()
    run(plain, out)
    assert sha_of(out) == "unknown"

"""Loads the operator library (torch.ops.gaugelab) after checking it was built for the imported torch,
and reads the trainer's own tables through it: the conditions (gpt2/train/conditions.hpp) and the
multiplier placements (gpt2/model/config.hpp). Nothing here declares a condition or a placement again."""
from __future__ import annotations

import functools
import json
import os

import torch

from . import _build_info


def _release(version: str) -> str:
    """'2.11.0+cu130' -> '2.11.0' (the local tag names the build, not the ABI)."""
    return version.split("+")[0]


def check_torch_version(built: str, running: str) -> None:
    """Raises ImportError, one line naming both versions, unless the operator library's LibTorch
    (`built`) is the release of the imported torch (`running`)."""
    if _release(built) != _release(running):
        raise ImportError(f"gaugelab.torch was built against torch {_release(built)} but this Python imports torch "
                          f"{running}; rebuild gaugelab (make build) with this torch's CMake prefix")


@functools.lru_cache(maxsize=None)
def load():
    """torch.ops.gaugelab, the library loaded once."""
    check_torch_version(_build_info.TORCH_VERSION, torch.__version__)
    path = os.path.join(os.path.dirname(__file__), _build_info.LIBRARY)
    if not os.path.exists(path):
        raise ImportError(f"gaugelab.torch: the operator library {path} is missing (make build, with LibTorch)")
    torch.ops.load_library(path)
    return torch.ops.gaugelab


@functools.lru_cache(maxsize=None)
def conditions() -> dict:
    """The trainer's conditions table: key -> {title, acts_on, bundle, decays_qk, needs_qk_rows, hooks,
    compared_with}, in the table's order."""
    return {row["key"]: row for row in json.loads(load().conditions())}


@functools.lru_cache(maxsize=None)
def step_hooks() -> list:
    """The trainer's hook registry (gpt2/train/hook_registry.hpp): [{name, flags}], one row per hook kind."""
    return json.loads(load().step_hooks())


def condition(key: str) -> dict:
    rows = conditions()
    if key not in rows:
        raise ValueError(f"gaugelab.torch: condition must be one of {', '.join(rows)} (got {key!r})")
    return rows[key]


def placement(spec: str) -> dict:
    """A multiplier placement ("default", "none", "q:row+column,k:row", ...) as {site: mode} for every site
    (q, k, v, attn_out, mlp_in, mlp_out, lm_head), parsed by the trainer's parser."""
    return json.loads(load().lrm_placement(spec))

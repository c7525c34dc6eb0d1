"""What `make figures` builds: the experiments (expensive, cached under runs/) and the figure
scripts that read their logs. Each experiment is a gaugelab command; `--out LOG --force` is added."""

EXPERIMENTS = {
    # name: {"args": gaugelab argv after the binary, "out": the log, "deps": files whose change re-runs it}
    "toy_relu": {"args": ["toy", "relu"], "out": "runs/toy_relu.h5", "deps": []},
}

FIGURES = {
    # script (analysis/<script>.py): {"inputs": experiment names, passed as log paths in this order}
    "fig_seed004_invariance": {"inputs": ["toy_relu"]},
}

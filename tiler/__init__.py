"""The search: TCubeTiling space, screening, Optuna study, baselines and explanations.

The package imports none of its modules: ``from tiler.tune import tune``,
``from tiler.explain import explain_tiling``. Importing :mod:`tiler.limits` (the defaults the
``tiler`` command line shows in its help) then loads neither the search nor the model.
"""

"""Packaged hardware presets, one JSON file per SoC (written by scripts/gen_presets.py)."""

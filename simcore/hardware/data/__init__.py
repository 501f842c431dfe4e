"""Packaged data: hardware presets and model constants."""

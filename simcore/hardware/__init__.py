"""The chips: SoC presets (buffer sizes, rates, clocks, each with its source) and data types."""

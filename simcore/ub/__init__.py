"""The Unified Buffer: banks, vector instruction cost, the UB data path (chips without FixPipe)."""

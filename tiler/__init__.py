"""tiler package."""

"""simcore package."""

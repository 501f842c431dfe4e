"""The HTTP API: one router module per resource, shared dependencies and middleware."""

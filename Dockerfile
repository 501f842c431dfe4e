# syntax=docker/dockerfile:1.7
# The tiler service: `docker build -t ascend-tiler . && docker run -p 8000:8000 -v tiler-data:/data ascend-tiler`
# Swagger UI at http://localhost:8000/docs. Settings are TILER_* environment variables (README).
#
# Two stages: the builder installs the locked dependencies and the project into /app/.venv with
# uv; the runtime image copies only that virtual environment (no uv, no compilers, no sources).

ARG PYTHON_VERSION=3.11
ARG UV_VERSION=0.13.8

FROM ghcr.io/astral-sh/uv:${UV_VERSION}-python${PYTHON_VERSION}-bookworm-slim AS builder
# Bytecode compiled at build time (faster start); copy, not hardlink, out of the cache mount;
# the image's own interpreter, never a downloaded one, so /app/.venv points at the same
# /usr/local/bin/python3 the runtime stage has.
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=0 \
    UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /app
# Dependencies first (a layer that only changes with the lock file). --frozen: install exactly
# what uv.lock pins, never re-resolve. --no-dev --no-group gp: no test tools and no PyTorch
# (Optuna's "gp" sampler then answers with a clear error).
RUN --mount=type=cache,target=/root/.cache/uv \
    --mount=type=bind,source=uv.lock,target=uv.lock \
    --mount=type=bind,source=pyproject.toml,target=pyproject.toml \
    uv sync --frozen --no-dev --no-group gp --no-install-project
COPY pyproject.toml uv.lock README.md ./
COPY simcore ./simcore
COPY tiler ./tiler
COPY app ./app
COPY migrations ./migrations
# The project itself, as a regular (non-editable) install: the venv does not need the sources.
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-group gp --no-editable

FROM python:${PYTHON_VERSION}-slim-bookworm AS runtime
LABEL org.opencontainers.image.title="ascend-tiler" \
      org.opencontainers.image.description="Autotuning service for Ascend C Matmul TCubeTiling"
# A fixed non-root uid/gid owns the data directory, so a named volume or a bind mount can be
# prepared for it (chown 10001:10001).
RUN groupadd --system --gid 10001 tiler \
 && useradd --system --uid 10001 --gid tiler --home-dir /app --no-create-home tiler \
 && mkdir -p /data \
 && chown tiler:tiler /data
COPY --from=builder --chown=tiler:tiler /app/.venv /app/.venv
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    TILER_DATA_DIR=/data
WORKDIR /app
USER tiler
# The SQLite database (and its WAL files) live here; keep it on a local volume, never on NFS.
VOLUME ["/data"]
EXPOSE 8000
# Liveness through /healthz with the interpreter the image already has (slim images have no curl).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"]
# Exec form: `tiler` runs as PID 1 and gets SIGTERM itself (no shell in between; uvicorn
# then drains open requests for up to 30 s). Single-node SQLite migrates at start; with several
# containers on PostgreSQL set TILER_MIGRATE_ON_START=false and run `tiler db upgrade` once.
ENTRYPOINT ["tiler", "serve", "--host", "0.0.0.0"]
CMD ["--port", "8000"]

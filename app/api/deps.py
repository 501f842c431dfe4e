"""Dependencies shared by the routes (``Annotated`` aliases)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.settings import Settings
from app.tuning import TuningService


def get_service(request: Request) -> TuningService:
    """The app's tuning service (built by the lifespan)."""
    service: TuningService = request.app.state.service
    return service


def get_settings_dep(request: Request) -> Settings:
    """The app's settings."""
    settings: Settings = request.app.state.settings
    return settings


ServiceDep = Annotated[TuningService, Depends(get_service)]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]

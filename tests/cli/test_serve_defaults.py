"""`puzzlezero serve` takes its defaults from ServerConfig: each option that sets a config field
defaults to that field's default (or to nothing, the config deciding, with the field's default
named in its help), and a server started with no options runs on ``ServerConfig()`` itself."""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

import pytest
import typer

from puzzlezero.cli.main import _load_commands, app, main
from puzzlezero.web.config import ServerConfig

#: serve's options that set a ServerConfig field: parameter name -> field name
CONFIG_FIELDS = {
    "workers": "workers",
    "queue": "queue",
    "client_waiting": "client_waiting",
    "client_running": "client_running",
    "job_idle_timeout": "job_idle_timeout",
    "time_limit": "max_time_limit",
    "max_nodes": "max_max_nodes",
    "grace_seconds": "grace_seconds",
    "overrun_margin": "overrun_margin",
    "worker_memory_mib": "worker_memory_mib",
    "max_body_bytes": "max_body_bytes",
    "shutdown_timeout": "shutdown_timeout",
    "start_timeout": "start_timeout",
    "respawn_backoff": "respawn_backoff",
    "executor": "executor",
    "model": "models",
    "puzzle_file": "puzzle_definitions",
    "node_modules": "node_modules",
    "allowed_host": "allowed_hosts",
    "forwarded_allow_ips": "forwarded_allow_ips",
    "address_limit": "address_limit",
    "client_keys_per_minute": "client_keys_per_minute",
    "client_secret": "client_secret",
    "rate_limit": "rate_limit",
    "rate_burst": "rate_burst",
    "limit_concurrency": "limit_concurrency",
    "keep_alive_timeout": "keep_alive_timeout",
    "header_timeout": "header_timeout",
}
#: serve's options that are not config fields (where to listen, what to build first, uvicorn's log)
OTHER_OPTIONS = {"host", "port", "log_level", "build_tables"}


def serve_params() -> dict[str, Any]:
    """The serve command's click parameters by name."""
    _load_commands()
    command = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    return {p.name: p for p in command.params}


def test_every_serve_option_is_accounted_for() -> None:
    assert set(serve_params()) == set(CONFIG_FIELDS) | OTHER_OPTIONS
    assert set(CONFIG_FIELDS.values()) <= {f.name for f in fields(ServerConfig)}


def test_each_serve_option_defaults_to_its_config_field() -> None:
    params = serve_params()
    by_name = {f.name: f for f in fields(ServerConfig)}
    for name, field_name in CONFIG_FIELDS.items():
        option, field = params[name], by_name[field_name]
        default = None if field.default is MISSING else field.default
        if option.default is None:  # the config decides; its default is named in the help
            if default is not None and not isinstance(default, (dict, tuple)):
                assert f"default: {default}" in option.help, name
        else:
            assert option.default == default, name


def test_serve_without_options_runs_on_the_configs_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    from puzzlezero.cli import serve_cmds

    ran: list[ServerConfig] = []
    monkeypatch.setattr(serve_cmds, "prepare_tables", lambda config, build: [])
    monkeypatch.setattr(
        serve_cmds, "run_server", lambda app, host, port, log_level: ran.append(app.state.config)
    )
    assert main(["serve"]) == 0
    assert ran == [ServerConfig()]

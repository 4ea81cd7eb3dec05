"""``serve --executor thread`` runs solves in the server's own threads, with no memory limit, no
kill and no crash isolation: the command line refuses it in one line saying why, unless
``PUZZLEZERO_ALLOW_THREAD_EXECUTOR=1`` (the test suite's) is set; ``ServerConfig(executor="thread")``
in Python stays as it was."""

from __future__ import annotations

from typing import Any

import pytest

from puzzlezero.cli.main import main
from puzzlezero.web.config import ServerConfig

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

ENV = "PUZZLEZERO_ALLOW_THREAD_EXECUTOR"


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[ServerConfig]:
    """The configs ``serve`` would have run (nothing is built or served)."""
    from puzzlezero.cli import serve_cmds

    ran: list[ServerConfig] = []
    monkeypatch.setattr(serve_cmds, "prepare_tables", lambda config, build: [])
    monkeypatch.setattr(
        serve_cmds, "run_server", lambda app, host, port, log_level: ran.append(app.state.config)
    )
    return ran


@pytest.mark.parametrize("value", [None, "", "0", "yes", "true"])
def test_serve_refuses_the_thread_executor_saying_why(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    served: list[ServerConfig],
    value: str | None,
) -> None:
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    assert main(["serve", "--executor", "thread"]) == 2
    assert served == []  # no app made, nothing served
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: --executor thread is refused")
    for why in ("no memory limit", "no kill", "no crash isolation", "test suite", f"{ENV}=1"):
        assert why in err, err


def test_serve_runs_the_thread_executor_with_the_escape_hatch(
    monkeypatch: pytest.MonkeyPatch, served: list[ServerConfig]
) -> None:
    monkeypatch.setenv(ENV, "1")
    assert main(["serve", "--executor", "thread"]) == 0
    assert [c.executor for c in served] == ["thread"]


def test_serve_runs_worker_processes_whatever_the_environment(
    monkeypatch: pytest.MonkeyPatch, served: list[ServerConfig]
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert main(["serve"]) == 0 and main(["serve", "--executor", "process"]) == 0
    assert [c.executor for c in served] == ["process", "process"]


def test_the_python_api_still_makes_thread_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    from puzzlezero.web import create_app

    monkeypatch.delenv(ENV, raising=False)
    app: Any = create_app(ServerConfig(executor="thread", workers=1), solve_fn=lambda *a, **k: None)
    assert app.state.config.executor == "thread"


def test_the_option_help_names_the_risk_and_the_variable() -> None:
    import typer

    from puzzlezero.cli.main import _load_commands, app

    _load_commands()
    command = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    (param,) = [p for p in command.params if p.name == "executor"]
    assert "no memory limit" in param.help and ENV in param.help

"""One `tbsim.Server` (the installed binary) for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tbsim


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tbsim.Server]:
    out: Path = tmp_path_factory.mktemp("runs")
    with tbsim.Server(out=out, token="t0ken", max_sessions=32) as s:
        yield s


@pytest.fixture
def client(server: tbsim.Server) -> Iterator[tbsim.Client]:
    with tbsim.Client(server.url, token=server.token) as c:
        yield c

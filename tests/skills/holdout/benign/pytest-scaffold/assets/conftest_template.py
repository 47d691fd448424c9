import json
import pytest


@pytest.fixture
def sample_config(tmp_path):
    """A minimal configuration file in a temporary directory."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"retries": 3, "timeout": 2.5}))
    return path


@pytest.fixture
def frozen_now(monkeypatch):
    """Pin time.time() so that code under test sees a fixed clock."""
    import time

    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)
    return 1_700_000_000.0

"""The package logger: INFO reaches stderr whatever earlier code did to its level."""

from __future__ import annotations

import io
import logging

import pytest

from autograde.core.errors import InvalidValueError
from autograde.core.log import PROGRESS_ENV, Progress, logger, progress_interval, setup_logging


def test_info_is_shown_after_the_level_was_reset_to_notset(capsys: pytest.CaptureFixture[str]) -> None:
    """A level put back to NOTSET (as a fixture restoring the level it found before the first setup does) must
    not leave INFO to the root logger's WARNING: the next set-up shows INFO again."""
    setup_logging(logging.INFO)
    saved = logger.level
    try:
        logger.setLevel(logging.NOTSET)
        setup_logging(logging.INFO)
        logger.info("visible line")
        assert "visible line" in capsys.readouterr().err
    finally:
        logger.setLevel(saved)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_lines_come_at_the_interval_with_rate_and_time_left(messages: io.StringIO) -> None:
    """Lines every ``interval`` seconds, not per update; the rate starts at the first update (a model loaded
    before it does not count); one last line after progress lines."""
    clock = _Clock()
    with Progress(100, "grading g", "prompts", interval=10.0, clock=clock) as bar:
        clock.now = 20.0  # loading the model
        bar.update(10)
        for _ in range(9):
            clock.now += 4.0
            bar.update(10)
    lines = messages.getvalue().splitlines()
    assert lines == [
        "grading g: 10/100 prompts (10.0%), 0.50 prompts/s, 3m00s left",
        "grading g: 40/100 prompts (40.0%), 2.50 prompts/s, 24s left",
        "grading g: 70/100 prompts (70.0%), 2.50 prompts/s, 12s left",
        "grading g: 100/100 prompts in 56s (1.79 prompts/s)",
    ]


def test_a_job_shorter_than_the_interval_writes_no_progress_line(messages: io.StringIO) -> None:
    clock = _Clock()
    with Progress(5, "grading g", "prompts", interval=30.0, clock=clock) as bar:
        for _ in range(5):
            clock.now += 1.0
            bar.update(1)
    assert messages.getvalue() == ""


def test_the_interval_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROGRESS_ENV, "0")
    assert progress_interval() is None and Progress(3).interval is None
    monkeypatch.setenv(PROGRESS_ENV, "2.5")
    assert Progress(3).interval == 2.5
    monkeypatch.setenv(PROGRESS_ENV, "soon")
    with pytest.raises(InvalidValueError, match="AUTOGRADE_PROGRESS_INTERVAL='soon' is not a number of seconds"):
        progress_interval()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_bar_is_drawn_and_the_lines_go_only_to_log_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr a terminal: tqdm draws the bar there and the progress lines are left out of it, while a job's log
    file (another handler of the package logger) still gets them."""
    setup_logging(logging.INFO)
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    log_file = io.StringIO()
    handler = logging.StreamHandler(log_file)
    logger.addHandler(handler)
    try:
        clock = _Clock()
        with Progress(4, "grading g", "prompts", interval=1.0, clock=clock) as bar:
            for _ in range(4):
                clock.now += 2.0
                bar.update(1)
    finally:
        logger.removeHandler(handler)
    assert "grading g:   0%|" in terminal.getvalue()  # tqdm's bar
    assert "prompts/s," not in terminal.getvalue()  # no progress line
    assert "grading g: 2/4 prompts (50.0%)" in log_file.getvalue()

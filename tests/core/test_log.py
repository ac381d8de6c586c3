"""The package logger: INFO reaches stderr whatever earlier code did to its level."""

from __future__ import annotations

import logging

import pytest

from autograde.core.log import logger, setup_logging


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
